# Sources of src/backend/cuda
