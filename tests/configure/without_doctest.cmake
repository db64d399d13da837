# Configures scopeprof as a packager or a vendoring project does, with doctest hidden
# (CMAKE_DISABLE_FIND_PACKAGE_doctest), and checks:
#   1. the default configure succeeds, says the tests are skipped, defines no test target, and the library's
#      users still build: the quickstart example is built and run, the benchmarks are defined when Google
#      Benchmark is found; a re-run of the same configure still succeeds;
#   2. -DSCOPEPROF_BUILD_TESTS=ON on that build tree fails and names doctest and its Debian package;
#   3. -DSCOPEPROF_BUILD_TESTS=ON on a fresh build tree fails the same way.
# cmake -DSOURCE=<scopeprof source> -DWORK=<scratch dir> -DGENERATOR=<generator> -DCXX=<compiler> -P this
set(_hide -DCMAKE_DISABLE_FIND_PACKAGE_doctest=ON)
set(_common -G "${GENERATOR}" -DCMAKE_CXX_COMPILER=${CXX} -DSCOPEPROF_INSTALL=OFF)
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
set(_failures "")

function(_configure dir out_rc out_text)
  execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE} -B ${dir} ${_common} ${ARGN}
                  RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _err)
  # CMake wraps the text of an error at 80 columns: match it as one line.
  string(REGEX REPLACE "[ \n]+" " " _text "${_out}${_err}")
  set(${out_rc} ${_rc} PARENT_SCOPE)
  set(${out_text} "${_text}" PARENT_SCOPE)
endfunction()

macro(_fail what text)
  string(APPEND _failures "-- ${what}\n${text}\n")
endmacro()

set(_skipped_message "scopeprof: doctest not found, tests skipped")
set(_error_pattern "SCOPEPROF_BUILD_TESTS is ON but doctest was not found.*doctest-dev")

# 1. Default configure, build and run one example, configure again.
set(_b "${WORK}/default")
_configure(${_b} _rc _text ${_hide})
if(NOT _rc EQUAL 0)
  _fail("default configure without doctest failed (exit ${_rc})" "${_text}")
elseif(NOT _text MATCHES "${_skipped_message}")
  _fail("default configure without doctest does not say '${_skipped_message}'" "${_text}")
else()
  execute_process(COMMAND ${CMAKE_COMMAND} --build ${_b} --target help OUTPUT_VARIABLE _targets ERROR_VARIABLE _err)
  if(_targets MATCHES "(^|[\n. ])scopeprof_tests[:\n ]" OR _targets MATCHES "(^|[\n. ])scopeprof_test_main[:\n ]")
    _fail("tests were skipped, yet test targets are defined" "${_targets}")
  endif()
  if(NOT _text MATCHES "Google Benchmark not found" AND NOT _targets MATCHES "(^|[\n. ])scopeprof_bench[:\n ]")
    _fail("Google Benchmark was found, yet scopeprof_bench is not defined" "${_targets}")
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} --build ${_b} --target quickstart
                  RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _err)
  if(NOT _rc EQUAL 0)
    _fail("building quickstart without doctest failed" "${_out}${_err}")
  else()
    execute_process(COMMAND ${_b}/examples/quickstart WORKING_DIRECTORY ${_b}
                    RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _err)
    if(NOT _rc EQUAL 0 OR NOT _out MATCHES "scopeprof report")
      _fail("quickstart built without doctest did not run (exit ${_rc})" "${_out}${_err}")
    endif()
  endif()
  _configure(${_b} _rc _text ${_hide})
  if(NOT _rc EQUAL 0 OR NOT _text MATCHES "${_skipped_message}")
    _fail("re-running the default configure without doctest did not skip the tests again (exit ${_rc})" "${_text}")
  endif()

  # 2. Asking for the tests on the same build tree.
  _configure(${_b} _rc _text ${_hide} -DSCOPEPROF_BUILD_TESTS=ON)
  if(_rc EQUAL 0 OR NOT _text MATCHES "${_error_pattern}")
    _fail("-DSCOPEPROF_BUILD_TESTS=ON on an existing build tree without doctest did not fail with the message (exit ${_rc})"
          "${_text}")
  endif()
endif()

# 3. Asking for the tests on a fresh build tree.
_configure(${WORK}/asked _rc _text ${_hide} -DSCOPEPROF_BUILD_TESTS=ON)
if(_rc EQUAL 0 OR NOT _text MATCHES "${_error_pattern}")
  _fail("-DSCOPEPROF_BUILD_TESTS=ON without doctest did not fail with the message (exit ${_rc})" "${_text}")
endif()

if(NOT _failures STREQUAL "")
  message(FATAL_ERROR "${_failures}")
endif()
file(REMOVE_RECURSE "${WORK}")
message(STATUS "without doctest: tests skipped with a message, quickstart built and ran; asked-for tests fail clearly")
