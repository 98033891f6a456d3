# Sources of src/math
theo_add_sources(THEO_SOURCES primes.cpp params.cpp security.cpp prime_system.cpp
                 parameter_grid.cpp bigint.cpp prng.cpp fingerprint.cpp uniform_seed.cpp
                 compact_expand.cpp)

# Presets embedded into the library (owner: math number theory). Every presets/*.json becomes a
# raw string literal in the generated presets_embedded.cpp; CMake re-runs when a preset changes.
file(GLOB THEO_PRESET_FILES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/../../presets/*.json)
list(SORT THEO_PRESET_FILES)
set(THEO_PRESET_ENTRIES "")
foreach(theo_preset_file IN LISTS THEO_PRESET_FILES)
  get_filename_component(theo_preset_name ${theo_preset_file} NAME_WE)
  file(READ ${theo_preset_file} theo_preset_text)
  string(APPEND THEO_PRESET_ENTRIES
         "    {\"${theo_preset_name}\", R\"theo_preset(${theo_preset_text})theo_preset\"},\n")
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${theo_preset_file})
endforeach()
configure_file(${CMAKE_CURRENT_LIST_DIR}/presets_embedded.cpp.in
               ${CMAKE_CURRENT_BINARY_DIR}/presets_embedded.cpp @ONLY)
list(APPEND THEO_SOURCES ${CMAKE_CURRENT_BINARY_DIR}/presets_embedded.cpp)
