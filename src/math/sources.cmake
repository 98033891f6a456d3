# Sources of src/math
