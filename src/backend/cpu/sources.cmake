# Sources of src/backend/cpu: the CPU reference backend, one op family per file, and its host
# memory (the thread pool is common/, the capture arena backend_common).
theo_add_sources(THEO_SOURCES host_allocator.cpp ntt_kernels.cpp bconv_kernels.cpp cpu_backend.cpp
                 cpu_capture.cpp cpu_ntt.cpp cpu_bconv.cpp cpu_elementwise.cpp cpu_automorphism.cpp
                 cpu_sampler.cpp)
# The exact-BConv rounding must be the contract's separate multiply and add, never an FMA.
set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/bconv_kernels.cpp
  PROPERTIES COMPILE_OPTIONS -ffp-contract=off)
