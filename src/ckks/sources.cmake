# Sources of src/ckks
list(APPEND THEO_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/rns_util.cpp
  ${CMAKE_CURRENT_LIST_DIR}/context.cpp
  ${CMAKE_CURRENT_LIST_DIR}/level_tables.cpp
  ${CMAKE_CURRENT_LIST_DIR}/special_fft.cpp
  ${CMAKE_CURRENT_LIST_DIR}/encoder.cpp
  ${CMAKE_CURRENT_LIST_DIR}/key_generator.cpp
  ${CMAKE_CURRENT_LIST_DIR}/encryptor.cpp
  ${CMAKE_CURRENT_LIST_DIR}/keyswitch/stages.cpp
  ${CMAKE_CURRENT_LIST_DIR}/keyswitch/dataflows.cpp
  ${CMAKE_CURRENT_LIST_DIR}/keyswitch/key_switcher.cpp
  ${CMAKE_CURRENT_LIST_DIR}/key_switch_tuning.cpp
  ${CMAKE_CURRENT_LIST_DIR}/rescaler.cpp
  ${CMAKE_CURRENT_LIST_DIR}/evaluator.cpp
  ${CMAKE_CURRENT_LIST_DIR}/evaluator_rotate.cpp
  ${CMAKE_CURRENT_LIST_DIR}/evaluator_combine.cpp
  ${CMAKE_CURRENT_LIST_DIR}/evaluator_hoisting.cpp
  ${CMAKE_CURRENT_LIST_DIR}/evaluator_batch.cpp
  ${CMAKE_CURRENT_LIST_DIR}/serial_container.cpp
  ${CMAKE_CURRENT_LIST_DIR}/serial_pool.cpp
  ${CMAKE_CURRENT_LIST_DIR}/serialization.cpp
  ${CMAKE_CURRENT_LIST_DIR}/graph.cpp)
