# theo_bench: benchmark cases from a registry (bench_case.h), one JSON record per op.
# Scheme-level cases go in their own bench/*_cases.cpp, listed here.
set(THEO_BENCH_GIT_COMMIT "unknown")
find_package(Git QUIET)
if(GIT_FOUND)
  execute_process(COMMAND ${GIT_EXECUTABLE} rev-parse HEAD
                  WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
                  OUTPUT_VARIABLE THEO_BENCH_GIT_COMMIT OUTPUT_STRIP_TRAILING_WHITESPACE
                  ERROR_QUIET)
endif()

add_executable(theo_bench
  ${CMAKE_CURRENT_LIST_DIR}/main.cpp
  ${CMAKE_CURRENT_LIST_DIR}/registry.cpp
  ${CMAKE_CURRENT_LIST_DIR}/timing.cpp
  ${CMAKE_CURRENT_LIST_DIR}/device_timer.cpp
  ${CMAKE_CURRENT_LIST_DIR}/host_info.cpp
  ${CMAKE_CURRENT_LIST_DIR}/ring_cases.cpp
  ${CMAKE_CURRENT_LIST_DIR}/scheme_cases.cpp)
target_link_libraries(theo_bench PRIVATE theodosian::theo nlohmann_json::nlohmann_json)
# device_timer.cpp reaches the CUDA backend's internal header (backend/cuda/cuda_backend.h).
target_include_directories(theo_bench PRIVATE ${PROJECT_SOURCE_DIR}/src)
target_compile_definitions(theo_bench PRIVATE
  THEO_BENCH_GIT_COMMIT="${THEO_BENCH_GIT_COMMIT}"
  THEO_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
theo_target_warnings(theo_bench)
