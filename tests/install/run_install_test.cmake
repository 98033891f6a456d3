# cmake -P script behind the `install_consumer` test (see CMakeLists.txt next to it).
# Inputs: THEO_BUILD_DIR CONSUMER_SOURCE_DIR WORK_DIR GENERATOR CXX_COMPILER BUILD_TYPE EXPECT_CUDA
#         [CUDA_ROOT]
cmake_minimum_required(VERSION 3.25)

function(run_step what)
  message(STATUS "install test: ${what}")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "install test: ${what} failed (${rc}):\n${out}")
  endif()
  set(step_output "${out}" PARENT_SCOPE)
endfunction()

if(NOT BUILD_TYPE)
  set(BUILD_TYPE Release)
endif()
set(prefix ${WORK_DIR}/prefix)
file(REMOVE_RECURSE ${WORK_DIR})

run_step("install into ${prefix}"
         ${CMAKE_COMMAND} --install ${THEO_BUILD_DIR} --prefix ${prefix} --config ${BUILD_TYPE})

set(configure_args -S ${CONSUMER_SOURCE_DIR} -B ${WORK_DIR}/build -G ${GENERATOR}
    -DCMAKE_BUILD_TYPE=${BUILD_TYPE} -DCMAKE_CXX_COMPILER=${CXX_COMPILER}
    -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)
if(CUDA_ROOT)
  list(APPEND configure_args -DCUDAToolkit_ROOT=${CUDA_ROOT})
endif()
run_step("configure the consumer" ${CMAKE_COMMAND} ${configure_args})
if(NOT step_output MATCHES "theodosian_DIR: ${prefix}/")
  message(FATAL_ERROR "install test: the consumer did not use the installed package:\n"
                      "${step_output}")
endif()
run_step("build the consumer" ${CMAKE_COMMAND} --build ${WORK_DIR}/build --config ${BUILD_TYPE})

find_program(consumer theo_consumer PATHS ${WORK_DIR}/build ${WORK_DIR}/build/${BUILD_TYPE}
             NO_DEFAULT_PATH REQUIRED)
run_step("run the consumer" ${consumer})
message(STATUS "install test: consumer says:\n${step_output}")
if(EXPECT_CUDA)
  set(cuda_word yes)
else()
  set(cuda_word no)
endif()
if(NOT step_output MATCHES "N = 65536" OR NOT step_output MATCHES "CUDA backend: ${cuda_word}")
  message(FATAL_ERROR "install test: unexpected consumer output")
endif()
message(STATUS "install test: passed")
