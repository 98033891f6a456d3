# Sources of src/circuits
list(APPEND THEO_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/chebyshev.cpp
  ${CMAKE_CURRENT_LIST_DIR}/polynomial.cpp
  ${CMAKE_CURRENT_LIST_DIR}/linear_transform.cpp
  ${CMAKE_CURRENT_LIST_DIR}/dft.cpp
  ${CMAKE_CURRENT_LIST_DIR}/mod1.cpp
  ${CMAKE_CURRENT_LIST_DIR}/bootstrapper.cpp
  ${CMAKE_CURRENT_LIST_DIR}/bootstrap_diagnostics.cpp
  ${CMAKE_CURRENT_LIST_DIR}/bootstrapping_keys_io.cpp
  ${CMAKE_CURRENT_LIST_DIR}/cnn.cpp
  ${CMAKE_CURRENT_LIST_DIR}/level_planner.cpp
  ${CMAKE_CURRENT_LIST_DIR}/rotate_sum.cpp
  ${CMAKE_CURRENT_LIST_DIR}/activation_fit.cpp
  ${CMAKE_CURRENT_LIST_DIR}/masked_polynomial.cpp
  ${CMAKE_CURRENT_LIST_DIR}/packed_matmul.cpp)
