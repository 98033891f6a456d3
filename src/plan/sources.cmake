# Sources of src/plan: decisions from shapes and device facts (no Backend op).
list(APPEND THEO_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/dataflow.cpp
  ${CMAKE_CURRENT_LIST_DIR}/dataflow_selection.cpp
  ${CMAKE_CURRENT_LIST_DIR}/tuning_table.cpp)
