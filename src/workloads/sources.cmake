# Sources of src/workloads (encrypted ML workloads built from circuits/).
list(APPEND THEO_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/helr.cpp
  ${CMAKE_CURRENT_LIST_DIR}/digits.cpp
  ${CMAKE_CURRENT_LIST_DIR}/resnet.cpp)
