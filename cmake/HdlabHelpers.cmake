# Shared CMake helpers: warnings for our own targets, and one way to declare a test.

function(hdlab_warnings target)
  if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    target_compile_options(${target} PRIVATE
      $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow>)
  endif()
endfunction()

# hdlab_add_test(NAME name SOURCES a.cpp b.cpp LIBS hdlab::model ...)
# One Catch2 executable per module; its TEST_CASEs are discovered into CTest.
function(hdlab_add_test)
  cmake_parse_arguments(T "" "NAME" "SOURCES;LIBS" ${ARGN})
  add_executable(${T_NAME} ${T_SOURCES} ${PROJECT_SOURCE_DIR}/tests/catch_main.cpp)
  target_link_libraries(${T_NAME} PRIVATE Catch2::Catch2 ${T_LIBS})
  target_compile_definitions(${T_NAME} PRIVATE
    HDLAB_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    HDLAB_BINARY_DIR="${PROJECT_BINARY_DIR}")
  hdlab_warnings(${T_NAME})
  catch_discover_tests(${T_NAME}
    TEST_PREFIX "${T_NAME}:"
    PROPERTIES SKIP_RETURN_CODE 4)
endfunction()
