# Sources of src/model: the traffic recorder and its per-op cost table, the recording Backend
# decorator, GPU descriptors, the reports and the cost-only backend. A leaf: nothing in the
# library links it.
theo_add_sources(THEO_SOURCES traffic.cpp traffic_model.cpp recording_backend.cpp gpu.cpp
                 report.cpp key_report.cpp cost_only_backend.cpp traffic_trace.cpp)
