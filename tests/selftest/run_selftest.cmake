# cmake -P script, registered by tests/CMakeLists.txt: configures, builds and runs the small
# project in this folder with CTest, then demands CTest's verdict on each of its cases.
# The cases fail, skip or pass on purpose (selftest_cases.cpp); a verdict other than the
# one listed below means a failure could be reported as a skip or a pass, and this test
# fails, naming the case.
#
# Inputs (-D): SELFTEST_SOURCE_DIR, SELFTEST_BINARY_DIR, GENERATOR, MAKE_PROGRAM,
# CXX_COMPILER, CXX_COMPILER_LAUNCHER (may be empty), CATCH2_DIR, CTEST_COMMAND.

cmake_minimum_required(VERSION 3.25)

foreach(var SELFTEST_SOURCE_DIR SELFTEST_BINARY_DIR GENERATOR CXX_COMPILER CATCH2_DIR CTEST_COMMAND)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "run_selftest.cmake: -D${var}=... is required")
  endif()
endforeach()

# The verdict CTest must give each case (the test names are "selftest_cases:" + these).
set(expected_cases
  "failed: exactly four failed assertions=Failed"
  "failed: prints the skip line, then fails an assertion=Failed"
  "failed: exits with code 4 without a failed assertion=Failed"
  "failed: fails an assertion, then calls skip_test=Failed"
  "skipped: calls skip_test before any assertion=Skipped"
  "passed: one passing assertion=Passed")

function(run_step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "selftest: ${what} failed (${rc}):\n${out}\n${err}")
  endif()
endfunction()

set(configure_args -S "${SELFTEST_SOURCE_DIR}" -B "${SELFTEST_BINARY_DIR}" -G "${GENERATOR}"
                   -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}" "-DCatch2_DIR=${CATCH2_DIR}")
if(MAKE_PROGRAM)
  list(APPEND configure_args "-DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM}")
endif()
if(CXX_COMPILER_LAUNCHER)
  string(REPLACE ";" "\\;" launcher "${CXX_COMPILER_LAUNCHER}")  # a launcher with arguments is a list
  list(APPEND configure_args "-DCMAKE_CXX_COMPILER_LAUNCHER=${launcher}")
endif()
run_step("configuring ${SELFTEST_SOURCE_DIR}" "${CMAKE_COMMAND}" ${configure_args})
run_step("building it" "${CMAKE_COMMAND}" --build "${SELFTEST_BINARY_DIR}")

# Most cases fail on purpose, so CTest's own exit code says nothing here: read each verdict.
execute_process(COMMAND "${CTEST_COMMAND}" --test-dir "${SELFTEST_BINARY_DIR}" --timeout 60
                OUTPUT_VARIABLE ctest_out ERROR_VARIABLE ctest_err)
string(REPLACE "\n" ";" ctest_lines "${ctest_out}")

set(problems "")
set(seen 0)
foreach(line IN LISTS ctest_lines)
  # "2/6 Test #2: selftest_cases:<case> ....***Failed    0.01 sec"
  if(line MATCHES "Test +#[0-9]+: selftest_cases:(.*[^ .]) \\.+ *(\\*\\*\\*)?([A-Za-z]+)")
    set(name "${CMAKE_MATCH_1}")
    set(verdict "${CMAKE_MATCH_3}")
    math(EXPR seen "${seen} + 1")
    set(want "")
    foreach(entry IN LISTS expected_cases)
      if(entry MATCHES "^(.*)=([A-Za-z]+)$" AND CMAKE_MATCH_1 STREQUAL name)
        set(want "${CMAKE_MATCH_2}")
      endif()
    endforeach()
    if(want STREQUAL "")
      string(APPEND problems "  \"${name}\": not a case this script knows (add it to expected_cases)\n")
    elseif(NOT verdict STREQUAL want)
      string(APPEND problems "  \"${name}\": CTest says ${verdict}, must be ${want}\n")
    endif()
  endif()
endforeach()
list(LENGTH expected_cases expected_count)
if(NOT seen EQUAL expected_count)
  string(APPEND problems "  CTest reported ${seen} cases, expected ${expected_count}\n")
endif()

if(problems)
  message(FATAL_ERROR "selftest: CTest's verdicts are wrong:\n${problems}\nCTest's output:\n${ctest_out}\n${ctest_err}")
endif()
message(STATUS "selftest: all ${expected_count} cases got their verdict (failures failed, the skip skipped)")
