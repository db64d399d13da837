// A translation unit in the external mode: it sees the hot path and declarations only.
#if !defined(SCOPEPROF_MODES_HEADER_ONLY)
#define SCOPEPROF_EXTERNAL_IMPLEMENTATION
#endif
#include <scopeprof.hpp>

#include <string>

int modes_leaf(int x) {
  PROF_SCOPE("modes.leaf");
  return x * 3 + 1;
}

int modes_outer(int n) {
  PROF_FUNCTION();
  int s = 0;
  for (int i = 0; i < n; ++i) {
    PROF_SCOPE_DYN(std::string("modes.dyn.") + std::to_string(i % 2));
    s += modes_leaf(i);
  }
  return s;
}
