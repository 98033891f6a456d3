# Finds libsodium; defines sodium::sodium. Prefers the static archive when THEO_STATIC_DEPS is on.
include(${CMAKE_CURRENT_LIST_DIR}/TheoFindLibrary.cmake)
theo_find_library(sodium SODIUM sodium.h sodium sodium::sodium)
