# Runs scripts/check-deps.sh on this build without nlohmann-json3-dev (whose package-config
# file every configuration finds) and demands exit 1 and a line naming that package.
execute_process(
  COMMAND ${SOURCE_DIR}/scripts/check-deps.sh ${BUILD_DIR} --without nlohmann-json3-dev
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 1)
  message(FATAL_ERROR "check-deps exited ${rc}, expected 1\n${out}${err}")
endif()
if(NOT out MATCHES "nlohmannConfig.cmake|nlohmann_jsonConfig.cmake")
  message(FATAL_ERROR "check-deps did not name nlohmann_json's package-config file:\n${out}")
endif()
if(NOT out MATCHES "belongs to package nlohmann-json3-dev, which scripts/install-deps.sh neither installs nor pulls in")
  message(FATAL_ERROR "check-deps did not name the missing package nlohmann-json3-dev:\n${out}")
endif()
message(STATUS "check-deps named the missing package:\n${out}")
