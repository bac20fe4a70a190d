# Shared CMake helpers: warnings for our own targets, and one way to declare a test.

function(hdlab_warnings target)
  if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    target_compile_options(${target} PRIVATE
      $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow>)
  endif()
  # GCC 12 reports -Wrestrict inside libstdc++'s own std::string code whenever a string
  # operation is inlined at -O2 (GCC bug 105329, fixed in GCC 13): hundreds of lines about
  # memcpy of 2^63 bytes that no code here performs. Silenced for that compiler only.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Wno-restrict>)
  endif()
  # Under -fsanitize=address GCC's -Wmaybe-uninitialized fires inside libstdc++'s <regex>
  # (pulled in by Catch2) on values it cannot see initialised through the instrumentation;
  # GCC's manual warns that sanitizers make that warning unreliable.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND (HDLAB_SANITIZE OR HDLAB_FUZZ))
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Wno-maybe-uninitialized>)
  endif()
endfunction()

# A test that cannot run here (no GPU, say) calls hdlab::testing::skip_test (tests/test_skip.hpp)
# before any assertion: it prints "HDLAB-SKIP: <why>" and ends the process at once. CTest
# reports a test as skipped only when its whole output is Catch2's "Filters:" line and then
# that one line: a failing test prints its failures and a summary after "Filters:", so no
# failure can match, and an exit code never means "skipped" (Catch2 exits with the number
# of failed assertions, so a code would let four failures pass as a skip).
# The regex holds newlines, which catch_discover_tests cannot pass on (its properties go
# through a build command line), so hdlab_add_test sets it from a CTest include file of its
# own, read after Catch2's list of the executable's tests.

# hdlab_add_test(NAME name SOURCES a.cpp b.cpp LIBS hdlab::model ...)
# One Catch2 executable per module; its TEST_CASEs are discovered into CTest.
# The hdlab tree is found from this file's place, not from the calling project, so that
# the self-test's own small project (tests/selftest) declares its tests with this very
# function.
function(hdlab_add_test)
  cmake_parse_arguments(T "" "NAME" "SOURCES;LIBS" ${ARGN})
  cmake_path(GET CMAKE_CURRENT_FUNCTION_LIST_DIR PARENT_PATH hdlab_root)
  # Catch2's implementation and the shared main are compiled once per build, not once per
  # executable (~15 s of compiler time each); test_session.cpp holds what differs.
  if(NOT TARGET hdlab_catch_main)
    add_library(hdlab_catch_main OBJECT ${hdlab_root}/tests/catch_main.cpp)
    target_link_libraries(hdlab_catch_main PRIVATE Catch2::Catch2)
    target_include_directories(hdlab_catch_main PRIVATE ${hdlab_root}/tests)
    hdlab_warnings(hdlab_catch_main)
  endif()
  add_executable(${T_NAME} ${T_SOURCES} ${hdlab_root}/tests/test_session.cpp)
  target_link_libraries(${T_NAME} PRIVATE hdlab_catch_main Catch2::Catch2 ${T_LIBS})
  target_include_directories(${T_NAME} PRIVATE ${hdlab_root}/tests)
  target_compile_definitions(${T_NAME} PRIVATE
    HDLAB_SOURCE_DIR="${hdlab_root}"
    HDLAB_BINARY_DIR="${PROJECT_BINARY_DIR}")
  hdlab_warnings(${T_NAME})
  # --warn NoTests: a test whose name the filter cannot match (a ';' splits it in two) fails
  # instead of passing with nothing run.
  catch_discover_tests(${T_NAME}
    TEST_PREFIX "${T_NAME}:"
    EXTRA_ARGS --warn NoTests
    TEST_LIST ${T_NAME}_TESTS)
  set(skip_file "${CMAKE_CURRENT_BINARY_DIR}/${T_NAME}_skip.cmake")
  file(WRITE "${skip_file}"
    "if(${T_NAME}_TESTS)\n"
    "  set_tests_properties(\${${T_NAME}_TESTS} PROPERTIES\n"
    "    SKIP_REGULAR_EXPRESSION \"^Filters: [^\\n]*\\nHDLAB-SKIP: [^\\n]+\\n$\")\n"
    "endif()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${skip_file}")
endfunction()
