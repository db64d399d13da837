// With SCOPEPROF_DISABLE, instrumenting a function must leave its object file as it was without
// scopeprof: compiled_out.cmake builds this file twice (with the scopes, and with SCOPEPROF_PLAIN_TU
// standing in for a file that never heard of scopeprof) and compares symbols, sections and instructions.
#if !defined(SCOPEPROF_PLAIN_TU)
#include <scopeprof.hpp>
#define WORK_SCOPES()            \
  PROF_FUNCTION();               \
  PROF_SCOPE("work");            \
  PROF_SCOPE_HOST("work_host");  \
  PROF_STEP();                   \
  PROF_SCOPE_DYN("work_dynamic")
#else
#define WORK_SCOPES()
#endif

int work(int x) {
  WORK_SCOPES();
  return x * 2;
}
