# The external mode keeps the cold code out of its users' objects: a TU with one PROF_SCOPE defines none of
# the runtime, report builder or writers (the header-only TU, for contrast, defines them all).
# -DCXX=compiler -DNM=nm -DINC=include dir -DSRC=scopes_external.cpp -DOUT=scratch dir
file(MAKE_DIRECTORY "${OUT}")
foreach(_mode external header_only)
  set(_defs "")
  if(_mode STREQUAL "header_only")
    set(_defs -DSCOPEPROF_MODES_HEADER_ONLY)
  endif()
  execute_process(COMMAND "${CXX}" -std=c++17 -O2 -c ${_defs} -I "${INC}" "${SRC}" -o "${OUT}/${_mode}.o"
                  RESULT_VARIABLE _rc ERROR_VARIABLE _err)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "compiling ${SRC} (${_mode}) failed:\n${_err}")
  endif()
  execute_process(COMMAND "${NM}" -C --defined-only "${OUT}/${_mode}.o" OUTPUT_VARIABLE _syms_${_mode})
endforeach()
# A writer's driver may be inlined into its report:: wrapper; its row functions then stand for it.
set(_cold "report_builder" "serialize_chrome_trace|append_trace_scope" "serialize_json|append_json_flat_row"
          "print_tables|print_flat_table" "detail::initialise" "scopeprof::[^ ]*::collect\\(")
foreach(_pattern IN LISTS _cold)
  if("${_syms_external}" MATCHES "${_pattern}")
    message(FATAL_ERROR "the external-mode object defines cold code (${_pattern}):\n${_syms_external}")
  endif()
  if(NOT "${_syms_header_only}" MATCHES "${_pattern}")
    message(FATAL_ERROR "the header-only object lacks ${_pattern}: this check no longer sees the cold code")
  endif()
endforeach()
string(REGEX MATCHALL "\n" _lines_ext "${_syms_external}")
string(REGEX MATCHALL "\n" _lines_ho "${_syms_header_only}")
list(LENGTH _lines_ext _n_ext)
list(LENGTH _lines_ho _n_ho)
message(STATUS "defined symbols: ${_n_ext} in the external-mode object, ${_n_ho} header-only")
