# Sources of src/ring
list(APPEND THEO_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/basis.cpp
  ${CMAKE_CURRENT_LIST_DIR}/backend.cpp
  ${CMAKE_CURRENT_LIST_DIR}/bconv_table.cpp
  ${CMAKE_CURRENT_LIST_DIR}/ntt_tables.cpp
  ${CMAKE_CURRENT_LIST_DIR}/shape_checks.cpp)
# Traffic model: recorder, scopes and the recording Backend decorator (theo/ring/traffic.h).
list(APPEND THEO_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/traffic.cpp
  ${CMAKE_CURRENT_LIST_DIR}/traffic_backend.cpp
  ${CMAKE_CURRENT_LIST_DIR}/traffic_model.cpp
  ${CMAKE_CURRENT_LIST_DIR}/traffic_trace.cpp)
# Without the CUDA backend, make_cuda_backend / cuda_available still need a definition.
if(NOT THEO_HAVE_CUDA)
  list(APPEND THEO_SOURCES ${CMAKE_CURRENT_LIST_DIR}/cuda_stubs.cpp)
endif()
