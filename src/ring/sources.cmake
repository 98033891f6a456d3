# Sources of src/ring
list(APPEND THEO_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/basis.cpp
  ${CMAKE_CURRENT_LIST_DIR}/backend.cpp
  ${CMAKE_CURRENT_LIST_DIR}/bconv_table.cpp
  ${CMAKE_CURRENT_LIST_DIR}/ntt_tables.cpp
  ${CMAKE_CURRENT_LIST_DIR}/shape_checks.cpp
  ${CMAKE_CURRENT_LIST_DIR}/op_scope.cpp)
# Traffic model: recorder, scopes and the recording Backend decorator (theo/ring/traffic.h).
list(APPEND THEO_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/traffic.cpp
  ${CMAKE_CURRENT_LIST_DIR}/traffic_backend.cpp
  ${CMAKE_CURRENT_LIST_DIR}/traffic_model.cpp)
