# Programs of apps/ (included by apps/CMakeLists.txt).

# theo_demo: a guided tour of the ring layer (scripts/demo builds and runs it).
add_executable(theo_demo ${CMAKE_CURRENT_LIST_DIR}/demo.cpp)
target_link_libraries(theo_demo PRIVATE theodosian::theo GMP::gmp)
theo_target_warnings(theo_demo)

# ---- theo_ckks_demo (owner: CKKS scheme layer) -------------------------------------------------
# Encrypt, degree-7 polynomial, rotate-and-sum, decrypt; precision and per-op timings.
add_executable(theo_ckks_demo ${CMAKE_CURRENT_LIST_DIR}/ckks_demo.cpp)
target_link_libraries(theo_ckks_demo PRIVATE theodosian::theo)
theo_target_warnings(theo_ckks_demo)
# ---- end theo_ckks_demo ------------------------------------------------------------------------

# ---- theo_boot_demo (owner: circuits) ----
# Bootstrapping demo: level plan, key-generation progress, time and precision per bootstrap.
add_executable(theo_boot_demo ${CMAKE_CURRENT_LIST_DIR}/boot_demo.cpp)
target_link_libraries(theo_boot_demo PRIVATE theodosian::theo)
theo_target_warnings(theo_boot_demo)
# ---- end theo_boot_demo ----

# theo_params: the dataflow study's parameter grid (which cells are secure) and one cell's set.
add_executable(theo_params ${CMAKE_CURRENT_LIST_DIR}/params.cpp)
target_link_libraries(theo_params PRIVATE theodosian::theo nlohmann_json::nlohmann_json)
theo_target_warnings(theo_params)

# theo_tune: measures the key-switch tuning table of this device for a parameter set.
add_executable(theo_tune ${CMAKE_CURRENT_LIST_DIR}/tune.cpp)
target_link_libraries(theo_tune PRIVATE theodosian::theo nlohmann_json::nlohmann_json)
theo_target_warnings(theo_tune)
if(THEO_BUILD_TESTS)
  # CI smoke test: a table for a small set on the CPU, written to a scratch directory.
  add_test(NAME theo_tune_cpu
           COMMAND theo_tune --cells 11,10,4 --insecure --backend cpu --reps 1 --warmup 0
                   --threads 2 --dir ${CMAKE_BINARY_DIR}/tuning-smoke)
  set_tests_properties(theo_tune_cpu PROPERTIES LABELS "cpu;bench" TIMEOUT 120)
endif()

# ---- theo_trace (owner: HMC simulator) ---------------------------------------------------------
# Op traces (docs/trace-format.md) of Boot / HMult / HRot / ... for python -m theodosian.sim.
add_executable(theo_trace ${CMAKE_CURRENT_LIST_DIR}/trace.cpp)
target_link_libraries(theo_trace PRIVATE theodosian::theo)
theo_target_warnings(theo_trace)
# ---- end theo_trace ----------------------------------------------------------------------------
# CI smoke test: theo_trace on the cost-only backend (records a bootstrapping without computing).
if(THEO_BUILD_TESTS)
  add_test(NAME theo_trace_cost
           COMMAND theo_trace test_boot_n12 --workloads hmult,keyswitch,boot --backend cost
                   --insecure --out-dir ${CMAKE_CURRENT_BINARY_DIR})
  set_tests_properties(theo_trace_cost PROPERTIES LABELS "cpu;model" TIMEOUT 120)
endif()
