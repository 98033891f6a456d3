# Sources of src/backend/cpu
