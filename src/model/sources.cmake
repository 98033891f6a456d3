# Sources of src/model: the traffic recorder and its per-op cost table, the recording Backend
# decorator, GPU descriptors, the reports and the cost-only backend. A leaf: nothing in the
# library links it.
set(theo_model_sources traffic.cpp traffic_model.cpp recording_backend.cpp gpu.cpp report.cpp
                       key_report.cpp cost_only_backend.cpp traffic_trace.cpp)
list(TRANSFORM theo_model_sources PREPEND ${CMAKE_CURRENT_LIST_DIR}/)
list(APPEND THEO_SOURCES ${theo_model_sources})
