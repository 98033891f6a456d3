# Sources of src/backend/cuda (included only when the CUDA backend is enabled)
list(APPEND THEO_CUDA_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/ntt.cu
  ${CMAKE_CURRENT_LIST_DIR}/bconv.cu
  ${CMAKE_CURRENT_LIST_DIR}/bconv_tensor.cu
  ${CMAKE_CURRENT_LIST_DIR}/elementwise.cu
  ${CMAKE_CURRENT_LIST_DIR}/keymult.cu
  ${CMAKE_CURRENT_LIST_DIR}/automorphism.cu
  ${CMAKE_CURRENT_LIST_DIR}/event_timer.cu
  ${CMAKE_CURRENT_LIST_DIR}/sampler.cu)
list(APPEND THEO_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/bconv_tensor_table.cpp
  ${CMAKE_CURRENT_LIST_DIR}/check.cpp
  ${CMAKE_CURRENT_LIST_DIR}/memory_pool.cpp
  ${CMAKE_CURRENT_LIST_DIR}/graph.cpp
  ${CMAKE_CURRENT_LIST_DIR}/cuda_backend.cpp)

# CMake < 3.26 knows no C++20 flag for nvcc (CUDA 12+ accepts -std=c++20); without this the
# top-level CMAKE_CUDA_STANDARD 20 fails at generate time.
if(CMAKE_VERSION VERSION_LESS 3.26 AND NOT DEFINED CMAKE_CUDA20_STANDARD_COMPILE_OPTION)
  set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
  set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
endif()
