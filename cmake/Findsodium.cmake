# Finds libsodium; defines sodium::sodium. Prefers the static archive when THEO_STATIC_DEPS is on.
find_path(SODIUM_INCLUDE_DIR sodium.h)
if(THEO_STATIC_DEPS)
  find_library(SODIUM_LIBRARY NAMES libsodium.a sodium)
else()
  find_library(SODIUM_LIBRARY NAMES sodium)
endif()
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(sodium REQUIRED_VARS SODIUM_LIBRARY SODIUM_INCLUDE_DIR)
if(sodium_FOUND AND NOT TARGET sodium::sodium)
  add_library(sodium::sodium UNKNOWN IMPORTED)
  set_target_properties(sodium::sodium PROPERTIES IMPORTED_LOCATION ${SODIUM_LIBRARY}
                                                  INTERFACE_INCLUDE_DIRECTORIES ${SODIUM_INCLUDE_DIR})
endif()
