# Sources of src/ckks
