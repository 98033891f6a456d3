# Sources of src/circuits
theo_add_sources(THEO_SOURCES chebyshev.cpp polynomial.cpp polynomial_lazy.cpp linear_transform.cpp
                 dft.cpp mod1.cpp bootstrapper.cpp bootstrap_diagnostics.cpp cnn.cpp
                 level_planner.cpp level_program.cpp rotate_sum.cpp activation_fit.cpp
                 masked_polynomial.cpp packed_matmul.cpp composite_sign.cpp)
