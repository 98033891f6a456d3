# Sources of src/backend/cpu: the CPU reference backend, one op family per file, and its host
# memory (the thread pool is common/, the capture arena backend_common).
set(theo_cpu_sources host_allocator.cpp ntt_kernels.cpp bconv_kernels.cpp cpu_backend.cpp
                     cpu_capture.cpp cpu_ntt.cpp cpu_bconv.cpp cpu_elementwise.cpp
                     cpu_automorphism.cpp cpu_sampler.cpp)
list(TRANSFORM theo_cpu_sources PREPEND ${CMAKE_CURRENT_LIST_DIR}/)
list(APPEND THEO_SOURCES ${theo_cpu_sources})
# The exact-BConv rounding must be the contract's separate multiply and add, never an FMA.
set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/bconv_kernels.cpp
  PROPERTIES COMPILE_OPTIONS -ffp-contract=off)
