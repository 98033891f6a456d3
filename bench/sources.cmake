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

# A benchmark program: linked with the library and nlohmann-json, the stamped commit
# (bench_commit.h) and THEO_SOURCE_DIR at hand, the project's warnings.
function(theo_bench_program name)
  add_executable(${name} ${ARGN})
  target_link_libraries(${name} PRIVATE theodosian::theo nlohmann_json::nlohmann_json)
  add_dependencies(${name} theo_bench_commit)
  target_include_directories(${name} PRIVATE ${CMAKE_CURRENT_BINARY_DIR}/generated)
  target_compile_definitions(${name} PRIVATE THEO_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  theo_target_warnings(${name})
endfunction()

theo_bench_program(theo_bench
  ${CMAKE_CURRENT_LIST_DIR}/main.cpp
  ${CMAKE_CURRENT_LIST_DIR}/registry.cpp
  ${CMAKE_CURRENT_LIST_DIR}/timing.cpp
  ${CMAKE_CURRENT_LIST_DIR}/device_timer.cpp
  ${CMAKE_CURRENT_LIST_DIR}/host_info.cpp
  ${CMAKE_CURRENT_LIST_DIR}/ring_cases.cpp
  ${CMAKE_CURRENT_LIST_DIR}/scheme_cases.cpp
  ${CMAKE_CURRENT_LIST_DIR}/scheme_env.cpp
  ${CMAKE_CURRENT_LIST_DIR}/graph_cases.cpp)
# device_timer.cpp reaches the CUDA backend's internal header (backend/cuda/cuda_backend.h).
target_include_directories(theo_bench PRIVATE ${PROJECT_SOURCE_DIR}/src)

# theo_bench --model: the traffic model of the mechanisms and a bootstrapping (model_bench.h).
target_sources(theo_bench PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/model_run.cpp
  ${CMAKE_CURRENT_LIST_DIR}/model_mechanisms.cpp
  ${CMAKE_CURRENT_LIST_DIR}/model_bootstrap.cpp)
# theo_boot_levers: bootstrapping with the levers of issue 31 one at a time (boot_levers.cpp).
theo_bench_program(theo_boot_levers
  ${CMAKE_CURRENT_LIST_DIR}/boot_levers.cpp
  ${CMAKE_CURRENT_LIST_DIR}/timing.cpp
  ${CMAKE_CURRENT_LIST_DIR}/device_timer.cpp
  ${CMAKE_CURRENT_LIST_DIR}/host_info.cpp)
# device_timer.cpp reaches the CUDA backend's internal header (backend/cuda/cuda_backend.h).
target_include_directories(theo_boot_levers PRIVATE ${PROJECT_SOURCE_DIR}/src)
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
  # CI smoke test of theo_boot_levers on the CPU: the baseline and every lever at N = 2^12.
  add_test(NAME theo_boot_levers_cpu
           COMMAND theo_boot_levers --backend cpu --presets test_boot_n12 --insecure --quick
                   --configs baseline,all)
  set_tests_properties(theo_boot_levers_cpu PROPERTIES LABELS "cpu;bench" TIMEOUT 300)
  # CI smoke test of `theo_bench --ablation` (every step, the batching sweep to B = 4) on the CPU.
  add_test(NAME theo_bench_ablation_cpu
           COMMAND theo_bench --ablation --preset test_boot_n12 --backend cpu --quick --threads 2)
  set_tests_properties(theo_bench_ablation_cpu PROPERTIES LABELS "cpu;bench" TIMEOUT 300)
  # CI smoke test of `theo_bench --dataflows` on the CPU: one small (insecure) cell, every
  # dataflow, outputs hashed against DPOB's.
  add_test(NAME theo_bench_dataflows_cpu
           COMMAND theo_bench --dataflows --backend cpu --cells 11,10,4 --insecure --quick --check
                   --threads 2 --out ${CMAKE_BINARY_DIR}/dataflows-smoke/cpu-dataflows.json)
  set_tests_properties(theo_bench_dataflows_cpu PROPERTIES LABELS "cpu;bench" TIMEOUT 120
                       FAIL_REGULAR_EXPRESSION "differs from DPOB"
                       FIXTURES_SETUP dataflows_json)
  # bench/plot_dataflows.py on that JSON: the acceptance summary (and the heat map where
  # matplotlib is installed).
  find_package(Python3 COMPONENTS Interpreter)
  if(Python3_Interpreter_FOUND)
    add_test(NAME plot_dataflows_cpu
             COMMAND Python3::Interpreter ${PROJECT_SOURCE_DIR}/bench/plot_dataflows.py
                     ${CMAKE_BINARY_DIR}/dataflows-smoke/cpu-dataflows.json
                     ${CMAKE_BINARY_DIR}/dataflows-smoke/cpu-dataflows.png --table)
    set_tests_properties(plot_dataflows_cpu PROPERTIES LABELS "cpu;bench" TIMEOUT 60
                         FIXTURES_REQUIRED dataflows_json
                         PASS_REGULAR_EXPRESSION "model alone within 10%")
  endif()
endif()

# theo_helr_bench: HELR training on the digits, ms per iteration with a phase breakdown, accuracy
# and precision against the plaintext reference, the traffic model with --profile.
theo_bench_program(theo_helr_bench ${CMAKE_CURRENT_LIST_DIR}/helr_bench.cpp)

# The CPU reference expansion of compact keys, words per second per ChaCha round count (JSON).
theo_bench_program(theo_compact_keys_cpu ${CMAKE_CURRENT_LIST_DIR}/compact_keys_cpu.cpp
                   ${CMAKE_CURRENT_LIST_DIR}/host_info.cpp)
target_include_directories(theo_compact_keys_cpu PRIVATE ${PROJECT_SOURCE_DIR}/src)

# KeyMult with full keys against compact keys (the uniform halves expanded in the kernel from a
# seed, math/compact_expand.h), alone and beside a copy / integer kernel: a standalone GPU probe
# (JSON lines, scripts/gpu/compact-keys.sh). Its --check mode is the GPU test of the expansion:
# bit-exact against the CPU reference.
if(THEO_HAVE_CUDA)
  add_executable(theo_compact_keys_probe ${CMAKE_CURRENT_LIST_DIR}/compact_keys_probe.cu)
  target_include_directories(theo_compact_keys_probe PRIVATE ${PROJECT_SOURCE_DIR}/src
                                                             ${CMAKE_CURRENT_BINARY_DIR}/generated)
  target_link_libraries(theo_compact_keys_probe PRIVATE theodosian::theo)
  target_compile_options(theo_compact_keys_probe PRIVATE
                         $<$<COMPILE_LANGUAGE:CUDA>:--expt-relaxed-constexpr -lineinfo>)
  add_dependencies(theo_compact_keys_probe theo_bench_commit)
  theo_target_warnings(theo_compact_keys_probe)
  if(THEO_BUILD_TESTS)
    add_test(NAME compact_keys_gpu_exact COMMAND theo_compact_keys_probe --check)
    set_tests_properties(compact_keys_gpu_exact PROPERTIES LABELS "gpu;cuda" SKIP_RETURN_CODE 77
                                                           TIMEOUT 300)
  endif()
endif()

# theo_resnet: encrypted ResNet inference on real images, class agreement, precision, the phase
# breakdown (bench/resnet_bench.cpp; scripts/gpu/workloads-resnet.sh runs it on the GPU).
theo_bench_program(theo_resnet ${CMAKE_CURRENT_LIST_DIR}/resnet_bench.cpp)
