# Sources of src/ckks
theo_add_sources(THEO_SOURCES rns_util.cpp context.cpp level_tables.cpp special_fft.cpp encoder.cpp
                 key_generator.cpp encryptor.cpp keyswitch/stages.cpp keyswitch/dataflows.cpp
                 keyswitch/key_switcher.cpp rescaler.cpp evaluator.cpp
                 evaluator_rotate.cpp evaluator_combine.cpp evaluator_hoisting.cpp
                 evaluator_batch.cpp graph.cpp)
