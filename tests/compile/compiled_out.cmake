# compiled_out.cpp with SCOPEPROF_DISABLE against the same file without scopeprof: the same defined and
# undefined symbols, no static-initialiser or thread-local sections, the same instruction count.
# -DCXX=compiler -DNM=nm -DOBJDUMP=objdump -DINC=include dir -DSRC=compiled_out.cpp -DOUT=scratch dir
file(MAKE_DIRECTORY "${OUT}")
foreach(_variant disabled plain)
  set(_def -DSCOPEPROF_DISABLE)
  if(_variant STREQUAL "plain")
    set(_def -DSCOPEPROF_PLAIN_TU)
  endif()
  # Every backend requested: SCOPEPROF_DISABLE must still pull in none of them.
  execute_process(COMMAND "${CXX}" -std=c++17 -O2 -c ${_def} -DSCOPEPROF_WITH_NVTX=1 -DSCOPEPROF_WITH_CUDA=1
                          -DSCOPEPROF_WITH_CUPTI=1 -DSCOPEPROF_WITH_TORCH=1 -I "${INC}" "${SRC}" -o "${OUT}/${_variant}.o"
                  RESULT_VARIABLE _rc ERROR_VARIABLE _err)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "compiling the ${_variant} variant failed:\n${_err}")
  endif()
  execute_process(COMMAND "${NM}" -C "${OUT}/${_variant}.o" OUTPUT_VARIABLE _syms)
  string(REGEX REPLACE "[0-9a-f]+ " "" _syms "${_syms}")  # addresses differ with code size, compared below
  set(_syms_${_variant} "${_syms}")
  execute_process(COMMAND "${OBJDUMP}" -h "${OUT}/${_variant}.o" OUTPUT_VARIABLE _sections)
  set(_sections_${_variant} "${_sections}")
  execute_process(COMMAND "${OBJDUMP}" -d --no-show-raw-insn "${OUT}/${_variant}.o" OUTPUT_VARIABLE _asm)
  string(REGEX MATCHALL "\n +[0-9a-f]+:\t" _insns "${_asm}")
  list(LENGTH _insns _n_${_variant})
endforeach()
message(STATUS "symbols with SCOPEPROF_DISABLE:\n${_syms_disabled}symbols without scopeprof:\n${_syms_plain}")
message(STATUS "instructions: ${_n_disabled} with SCOPEPROF_DISABLE, ${_n_plain} without scopeprof")
if(NOT _syms_disabled STREQUAL _syms_plain)
  message(FATAL_ERROR "SCOPEPROF_DISABLE left symbols behind (see above)")
endif()
foreach(_s .init_array .ctors .tbss .tdata)
  string(FIND "${_sections_disabled}" " ${_s} " _at)
  if(NOT _at EQUAL -1)
    message(FATAL_ERROR "SCOPEPROF_DISABLE left a ${_s} section (static initialiser or thread-local)")
  endif()
endforeach()
if(NOT _n_disabled EQUAL _n_plain)
  message(FATAL_ERROR "SCOPEPROF_DISABLE left code behind: ${_n_disabled} instructions against ${_n_plain}")
endif()
