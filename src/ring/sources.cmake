# Sources of src/ring: RNS polynomials, the Backend interface (its checked public ops and stream
# control), the neutral op scope and the traffic model (recorder, scopes and the recording Backend
# decorator, theo/ring/traffic.h).
set(theo_ring_sources basis.cpp backend.cpp backend_ops.cpp bconv_table.cpp ntt_tables.cpp
                      shape_checks.cpp stream_control.cpp op_scope.cpp traffic.cpp
                      traffic_backend.cpp traffic_model.cpp)
list(TRANSFORM theo_ring_sources PREPEND ${CMAKE_CURRENT_LIST_DIR}/)
list(APPEND THEO_SOURCES ${theo_ring_sources})
