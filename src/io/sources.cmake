# Sources of src/io: the serialization container, the per-type formats, the public save / load
# functions, bootstrapping key files.
theo_add_sources(THEO_SOURCES hash_pool.cpp container.cpp container_writer.cpp container_reader.cpp
                 format_keys.cpp format_values.cpp serialization.cpp bootstrapping_keys.cpp)
