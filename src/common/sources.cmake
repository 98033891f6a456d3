# Sources of src/common: what every layer may use (the environment reader, the thread pool).
list(APPEND THEO_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/environment.cpp
  ${CMAKE_CURRENT_LIST_DIR}/thread_pool.cpp)
