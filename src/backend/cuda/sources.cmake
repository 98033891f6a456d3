# Sources of src/backend/cuda (included only when the CUDA backend is enabled): the kernels and
# their launchers (nvcc), then the device state and the CudaBackend class, one op family per file
# (cuda_backend_impl.h lists them).
set(theo_cuda_kernels ntt.cu ntt_tiled.cu ntt_register.cu bconv.cu bconv_tensor.cu elementwise.cu
                      keymult.cu automorphism.cu event_timer.cu sampler.cu)
set(theo_cuda_host bconv_tensor_table.cpp check.cpp memory_pool.cpp pinned_host.cpp graph.cpp event_timer.cpp
                   cuda_backend.cpp cuda_tables.cpp cuda_tuning.cpp cuda_streams.cpp cuda_ntt.cpp
                   cuda_bconv.cpp cuda_elementwise.cpp cuda_keymult.cpp cuda_automorphism.cpp
                   cuda_sampler.cpp)
list(TRANSFORM theo_cuda_kernels PREPEND ${CMAKE_CURRENT_LIST_DIR}/)
list(TRANSFORM theo_cuda_host PREPEND ${CMAKE_CURRENT_LIST_DIR}/)
list(APPEND THEO_CUDA_SOURCES ${theo_cuda_kernels})
list(APPEND THEO_SOURCES ${theo_cuda_host})
