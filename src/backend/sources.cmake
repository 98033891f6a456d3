# Sources of src/backend itself: what both backends share (THEO_BACKEND_COMMON_SOURCES: the
# capture arena and fork state), and the factory that names them and the description of the
# device they run on (THEO_SOURCES).
theo_add_sources(THEO_BACKEND_COMMON_SOURCES capture_arena.cpp)
theo_add_sources(THEO_SOURCES factory.cpp device_facts.cpp)
