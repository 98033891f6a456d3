# theo_bench: benchmark cases from a registry (bench_case.h), one JSON record per op.
# Scheme-level cases go in their own bench/*_cases.cpp, listed here.
# The commit is stamped at build time (bench_commit.h), for JSON written by binaries carried to a
# machine without git.
set(THEO_BENCH_COMMIT_HEADER ${CMAKE_CURRENT_BINARY_DIR}/generated/bench_commit.h)
add_custom_target(theo_bench_commit
  COMMAND ${CMAKE_COMMAND} -DSRC=${PROJECT_SOURCE_DIR} -DOUT=${THEO_BENCH_COMMIT_HEADER}
          -P ${CMAKE_CURRENT_LIST_DIR}/write_commit.cmake
  BYPRODUCTS ${THEO_BENCH_COMMIT_HEADER}
  COMMENT "Stamping the benchmark's git commit"
  VERBATIM)

add_executable(theo_bench
  ${CMAKE_CURRENT_LIST_DIR}/main.cpp
  ${CMAKE_CURRENT_LIST_DIR}/registry.cpp
  ${CMAKE_CURRENT_LIST_DIR}/timing.cpp
  ${CMAKE_CURRENT_LIST_DIR}/device_timer.cpp
  ${CMAKE_CURRENT_LIST_DIR}/host_info.cpp
  ${CMAKE_CURRENT_LIST_DIR}/ring_cases.cpp
  ${CMAKE_CURRENT_LIST_DIR}/scheme_cases.cpp
  ${CMAKE_CURRENT_LIST_DIR}/scheme_env.cpp
  ${CMAKE_CURRENT_LIST_DIR}/graph_cases.cpp)
target_link_libraries(theo_bench PRIVATE theodosian::theo nlohmann_json::nlohmann_json)
add_dependencies(theo_bench theo_bench_commit)
# device_timer.cpp reaches the CUDA backend's internal header (backend/cuda/cuda_backend.h).
target_include_directories(theo_bench PRIVATE ${PROJECT_SOURCE_DIR}/src
                                              ${CMAKE_CURRENT_BINARY_DIR}/generated)
target_compile_definitions(theo_bench PRIVATE THEO_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
theo_target_warnings(theo_bench)

# theo_bench --model: the traffic model of the mechanisms and a bootstrapping (model_bench.h).
target_sources(theo_bench PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/model_run.cpp
  ${CMAKE_CURRENT_LIST_DIR}/model_mechanisms.cpp
  ${CMAKE_CURRENT_LIST_DIR}/model_bootstrap.cpp
  ${CMAKE_CURRENT_LIST_DIR}/model_report.cpp)
# theo_bench --dataflows: the key-switching dataflows over the parameter grid (dataflows_bench.h).
target_sources(theo_bench PRIVATE ${CMAKE_CURRENT_LIST_DIR}/dataflows_bench.cpp)
# theo_bench --ablation: the optimizations added one at a time (ablation_bench.h).
target_sources(theo_bench PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/ablation_steps.cpp
  ${CMAKE_CURRENT_LIST_DIR}/ablation_keyswitch.cpp
  ${CMAKE_CURRENT_LIST_DIR}/ablation_boot.cpp
  ${CMAKE_CURRENT_LIST_DIR}/ablation_run.cpp)
# CI smoke test of `theo_bench --model` on the CPU backend (small insecure bootstrapping preset).
if(THEO_BUILD_TESTS)
  add_test(NAME theo_bench_model_cpu
           COMMAND theo_bench --model --preset test_boot_n12 --insecure --backend cpu --quick
                   --threads 2)
  set_tests_properties(theo_bench_model_cpu PROPERTIES LABELS "cpu;bench" TIMEOUT 120)
  # CI smoke test of `theo_bench --ablation` (every step, the batching sweep to B = 4) on the CPU.
  add_test(NAME theo_bench_ablation_cpu
           COMMAND theo_bench --ablation --preset test_boot_n12 --backend cpu --quick --threads 2)
  set_tests_properties(theo_bench_ablation_cpu PROPERTIES LABELS "cpu;bench" TIMEOUT 300)
  # CI smoke test of `theo_bench --dataflows` on the CPU: one small (insecure) cell, every
  # dataflow, outputs hashed against DPOB's.
  add_test(NAME theo_bench_dataflows_cpu
           COMMAND theo_bench --dataflows --backend cpu --cells 11,10,4 --insecure --quick --check
                   --threads 2)
  set_tests_properties(theo_bench_dataflows_cpu PROPERTIES LABELS "cpu;bench" TIMEOUT 120
                       FAIL_REGULAR_EXPRESSION "differs from DPOB")
endif()

# theo_helr_bench: HELR training on the digits, ms per iteration with a phase breakdown, accuracy
# and precision against the plaintext reference, the traffic model with --profile.
add_executable(theo_helr_bench ${CMAKE_CURRENT_LIST_DIR}/helr_bench.cpp)
target_link_libraries(theo_helr_bench PRIVATE theodosian::theo nlohmann_json::nlohmann_json)
add_dependencies(theo_helr_bench theo_bench_commit)
target_include_directories(theo_helr_bench PRIVATE ${CMAKE_CURRENT_BINARY_DIR}/generated)
target_compile_definitions(theo_helr_bench PRIVATE THEO_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
theo_target_warnings(theo_helr_bench)
