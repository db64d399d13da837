// External-mode TUs linked with one implementation TU (the vendoring set-up, no CMake target): every scope
// is recorded, named and nested, and every writer works. Exits non-zero with a message on any mismatch.
#define SCOPEPROF_EXTERNAL_IMPLEMENTATION
#include <scopeprof.hpp>

#include <cstdio>
#include <cstring>
#include <sstream>
#include <string>

int modes_outer(int n);

namespace {
int failures = 0;
void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "FAILED: %s\n", what);
    ++failures;
  }
}
}  // namespace

int main() {
#if SCOPEPROF_DETAIL_DEFINE_COLD || !SCOPEPROF_DETAIL_COMPILED
  std::fprintf(stderr, "FAILED: main.cpp is not in the external mode\n");
  return 1;
#endif
  const int n = 10;
  const int sum = modes_outer(n);
  const scopeprof::report r = scopeprof::collect();
  check(sum == 3 * (n * (n - 1) / 2) + n, "the instrumented code computes what it computed before");
  check(r.counts().entered == 1 + 2 * n && r.counts().recorded == 1 + 2 * n, "every scope entered was recorded");
  const scopeprof::flat_row* leaf = r.find("modes.leaf");
  const scopeprof::flat_row* outer = r.find("modes_outer");
  const scopeprof::flat_row* dyn0 = r.find("modes.dyn.0");
  const scopeprof::flat_row* dyn1 = r.find("modes.dyn.1");
  check(leaf != nullptr && leaf->calls == static_cast<std::uint64_t>(n), "modes.leaf: n calls");
  check(outer != nullptr && outer->calls == 1, "modes_outer (PROF_FUNCTION): one call");
  check(dyn0 != nullptr && dyn1 != nullptr && dyn0->calls + dyn1->calls == static_cast<std::uint64_t>(n),
        "PROF_SCOPE_DYN names");
  bool nested = false;
  for (const auto& row : r.tree())
    if (row.name == "modes.leaf" && row.depth == 2) nested = true;
  check(nested, "modes.leaf nests under modes.dyn.* under modes_outer");
  std::ostringstream text;
  r.print(text);
  check(text.str().find("modes.leaf") != std::string::npos, "print() shows the scopes");
  check(r.json().find("\"modes.leaf\"") != std::string::npos, "json() has the scopes");
  check(r.csv().find("modes.leaf") != std::string::npos, "csv() has the scopes");
  check(r.chrome_trace().find("\"traceEvents\"") != std::string::npos, "chrome_trace() renders");
  if (failures == 0) std::printf("external-mode TUs + one implementation TU: %llu scopes recorded, all writers work\n",
                                 static_cast<unsigned long long>(r.counts().recorded));
  return failures == 0 ? 0 : 1;
}
