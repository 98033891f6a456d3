# Sources of src/plan: decisions only (the execution policy, the key-switch planner).
list(APPEND THEO_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/execution_policy.cpp
  ${CMAKE_CURRENT_LIST_DIR}/key_switch_planner.cpp)
