# Programs of apps/ (included by apps/CMakeLists.txt).

# theo_demo: a guided tour of the ring layer (scripts/demo builds and runs it).
add_executable(theo_demo ${CMAKE_CURRENT_LIST_DIR}/demo.cpp)
target_link_libraries(theo_demo PRIVATE theodosian::theo GMP::gmp)
theo_target_warnings(theo_demo)
