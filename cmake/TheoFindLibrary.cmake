# The find modules of the C libraries (FindGMP, Findsodium): finds <header> and the library <name>
# (its static archive lib<name>.a first when THEO_STATIC_DEPS is on) and defines the imported
# target <target>. A macro, so that <prefix>_INCLUDE_DIR, <prefix>_LIBRARY and <package>_FOUND are
# set where find_package() looks for them.
macro(theo_find_library package prefix header name target)
  find_path(${prefix}_INCLUDE_DIR ${header})
  if(THEO_STATIC_DEPS)
    find_library(${prefix}_LIBRARY NAMES lib${name}.a ${name})
  else()
    find_library(${prefix}_LIBRARY NAMES ${name})
  endif()
  include(FindPackageHandleStandardArgs)
  find_package_handle_standard_args(${package} REQUIRED_VARS ${prefix}_LIBRARY
                                                             ${prefix}_INCLUDE_DIR)
  if(${package}_FOUND AND NOT TARGET ${target})
    add_library(${target} UNKNOWN IMPORTED)
    set_target_properties(${target} PROPERTIES IMPORTED_LOCATION ${${prefix}_LIBRARY}
                                               INTERFACE_INCLUDE_DIRECTORIES ${${prefix}_INCLUDE_DIR})
  endif()
endmacro()
