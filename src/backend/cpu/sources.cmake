# Sources of src/backend/cpu
list(APPEND THEO_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/host_allocator.cpp
  ${CMAKE_CURRENT_LIST_DIR}/ntt_kernels.cpp
  ${CMAKE_CURRENT_LIST_DIR}/bconv_kernels.cpp
  ${CMAKE_CURRENT_LIST_DIR}/cpu_backend.cpp
  ${CMAKE_CURRENT_LIST_DIR}/cpu_capture.cpp
  ${CMAKE_CURRENT_LIST_DIR}/cpu_ntt.cpp
  ${CMAKE_CURRENT_LIST_DIR}/cpu_bconv.cpp
  ${CMAKE_CURRENT_LIST_DIR}/cpu_elementwise.cpp
  ${CMAKE_CURRENT_LIST_DIR}/cpu_automorphism.cpp
  ${CMAKE_CURRENT_LIST_DIR}/cpu_sampler.cpp)
# The exact-BConv rounding must be the contract's separate multiply and add, never an FMA.
set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/bconv_kernels.cpp
  PROPERTIES COMPILE_OPTIONS -ffp-contract=off)
