# Sources of src/ring
