# Sources of src/backend itself: what both backends share (THEO_BACKEND_COMMON_SOURCES: the
# capture arena and fork state), and the factory that names them and the description of the
# device they run on (THEO_SOURCES).
list(APPEND THEO_BACKEND_COMMON_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/capture_arena.cpp)
list(APPEND THEO_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/factory.cpp
  ${CMAKE_CURRENT_LIST_DIR}/device_facts.cpp)
