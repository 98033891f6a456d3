# Finds GMP; defines GMP::gmp. Prefers the static archive when THEO_STATIC_DEPS is on.
include(${CMAKE_CURRENT_LIST_DIR}/TheoFindLibrary.cmake)
theo_find_library(GMP GMP gmp.h gmp GMP::gmp)
