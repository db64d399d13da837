# Build hello.cpp for AArch64 in the header-only and the external-implementation modes (with
# src/scopeprof.cpp), and run both under qemu-user: the AArch64 counter (cntvct_el0), its calibration and
# the whole cold path on a second architecture. Registered only where the cross compiler and qemu exist.
foreach(mode header_only external)
  set(exe ${OUT}/hello_aarch64_${mode})
  if(mode STREQUAL "external")
    set(extra -DSCOPEPROF_EXTERNAL_IMPLEMENTATION ${SRC_IMPL})
  else()
    set(extra "")
  endif()
  execute_process(COMMAND ${CXX} -std=c++17 -O2 -Wall -Wextra -Werror -I ${INC} ${SRC} ${extra} -o ${exe} -pthread
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "AArch64 build (${mode}) failed:\n${out}${err}")
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} -E env QEMU_LD_PREFIX=${SYSROOT} ${QEMU} ${exe}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "AArch64 hello (${mode}) under qemu failed (${rc}):\n${out}${err}")
  endif()
  if(NOT out MATCHES "AArch64 virtual counter \\(cntvct_el0\\)")
    message(FATAL_ERROR "AArch64 hello (${mode}) did not use the AArch64 counter:\n${out}")
  endif()
  message(STATUS "AArch64 (${mode}): ok")
endforeach()
