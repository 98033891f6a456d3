# Finds GMP; defines GMP::gmp. Prefers the static archive when THEO_STATIC_DEPS is on.
find_path(GMP_INCLUDE_DIR gmp.h)
if(THEO_STATIC_DEPS)
  find_library(GMP_LIBRARY NAMES libgmp.a gmp)
else()
  find_library(GMP_LIBRARY NAMES gmp)
endif()
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(GMP REQUIRED_VARS GMP_LIBRARY GMP_INCLUDE_DIR)
if(GMP_FOUND AND NOT TARGET GMP::gmp)
  add_library(GMP::gmp UNKNOWN IMPORTED)
  set_target_properties(GMP::gmp PROPERTIES IMPORTED_LOCATION ${GMP_LIBRARY}
                                            INTERFACE_INCLUDE_DIRECTORIES ${GMP_INCLUDE_DIR})
endif()
