# Sources of src/common: what every layer may use (the environment reader, the thread pool).
theo_add_sources(THEO_SOURCES environment.cpp thread_pool.cpp)
