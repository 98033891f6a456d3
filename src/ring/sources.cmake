# Sources of src/ring: RNS polynomials, the Backend interface (its checked public ops and stream
# control) and the neutral op scope (theo/ring/op_scope.h) that observers such as model/'s traffic
# recorder read.
theo_add_sources(THEO_SOURCES basis.cpp backend.cpp backend_ops.cpp bconv_table.cpp ntt_tables.cpp
                 shape_checks.cpp stream_control.cpp op_scope.cpp)
