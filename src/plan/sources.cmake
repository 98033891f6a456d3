# Sources of src/plan: decisions only, from shapes and device facts (no Backend op): the execution
# policy, the key-switch planner, the dataflows' footprint model and selection, the tuning table.
list(APPEND THEO_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/execution_policy.cpp
  ${CMAKE_CURRENT_LIST_DIR}/key_switch_planner.cpp
  ${CMAKE_CURRENT_LIST_DIR}/dataflow.cpp
  ${CMAKE_CURRENT_LIST_DIR}/dataflow_selection.cpp
  ${CMAKE_CURRENT_LIST_DIR}/tuning_table.cpp)
