# Sources of src/tuning: measuring key-switch dataflows on this device into a tuning table, and
# making a Context with it.
theo_add_sources(THEO_SOURCES key_switch_tuning.cpp)
