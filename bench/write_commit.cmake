# Writes OUT (a header defining THEO_BENCH_GIT_COMMIT) from `git rev-parse HEAD` in SRC at build
# time, with "-dirty" when tracked files differ, and only when the text changes, so benchmark JSON
# names the commit its binary was built from (not the one the build directory was configured at).
set(commit "unknown")
find_package(Git QUIET)
if(GIT_FOUND)
  execute_process(COMMAND ${GIT_EXECUTABLE} rev-parse HEAD WORKING_DIRECTORY ${SRC}
                  OUTPUT_VARIABLE head OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET
                  RESULT_VARIABLE rc)
  if(rc EQUAL 0 AND head)
    set(commit "${head}")
    execute_process(COMMAND ${GIT_EXECUTABLE} status --porcelain --untracked-files=no
                    WORKING_DIRECTORY ${SRC} OUTPUT_VARIABLE changes ERROR_QUIET)
    if(changes)
      set(commit "${commit}-dirty")
    endif()
  endif()
endif()
set(text "#pragma once\n#define THEO_BENCH_GIT_COMMIT \"${commit}\"\n")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
else()
  set(old "")
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUT}" "${text}")
endif()
