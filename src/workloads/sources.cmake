# Sources of src/workloads (encrypted ML workloads built from circuits/).
theo_add_sources(THEO_SOURCES helr.cpp helr_han.cpp helr_sparse.cpp digits.cpp resnet.cpp resnet_model.cpp
                 resnet_relu.cpp)
