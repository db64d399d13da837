# Install a build tree into a prefix: cmake -DBIN=<build dir> -DPREFIX=<prefix> [-DCONFIG=<config>] -P this.
# With a single-config generator and no build type CONFIG is empty, and then no --config is passed (a
# --config there would skip the per-configuration export file that locates the compiled library).
set(_args --install "${BIN}" --prefix "${PREFIX}")
if(CONFIG)
  list(APPEND _args --config "${CONFIG}")
endif()
execute_process(COMMAND "${CMAKE_COMMAND}" ${_args} RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "cmake ${_args} failed (${_rc})")
endif()
