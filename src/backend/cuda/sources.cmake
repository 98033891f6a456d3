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
  ${CMAKE_CURRENT_LIST_DIR}/pinned_host.cpp
  ${CMAKE_CURRENT_LIST_DIR}/graph.cpp
  ${CMAKE_CURRENT_LIST_DIR}/cuda_backend.cpp)
