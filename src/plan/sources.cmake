# Sources of src/plan: decisions only, from shapes and device facts (no Backend op): the execution
# policy, the key-switch planner, the dataflows' footprint model and selection, the tuning table.
theo_add_sources(THEO_SOURCES execution_policy.cpp optimizations.cpp key_switch_planner.cpp
                 dataflow.cpp dataflow_selection.cpp tuning_table.cpp)
