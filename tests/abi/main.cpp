// Translation units built with different switches (one with SCOPEPROF_DISABLE, one with NVTX and one
// without) linked into one program: each must reach its own, self-consistent instance of the library
// whatever the link order, because the inline namespace names the configuration. Before that, the linker
// kept one TU's inline functions for all, and the counts depended on the order of the object files.
#include <cstdint>
#include <cstdio>

struct tu_result {
  std::uint64_t recorded;
  std::uint64_t entered;
  std::uint64_t sites_named_here;
};
tu_result run_enabled();
tu_result run_disabled();
tu_result run_no_nvtx();

namespace {
int failures = 0;
void expect(const char* what, std::uint64_t got, std::uint64_t want) {
  std::printf("%-28s %llu (want %llu)\n", what, static_cast<unsigned long long>(got), static_cast<unsigned long long>(want));
  if (got != want) ++failures;
}
}  // namespace

int main() {
  const tu_result e = run_enabled();
  const tu_result d = run_disabled();
  const tu_result n = run_no_nvtx();
  expect("enabled: recorded", e.recorded, 10);
  expect("enabled: entered", e.entered, 10);
  expect("enabled: abi_scope calls", e.sites_named_here, 10);
  expect("disabled: recorded", d.recorded, 0);
  expect("disabled: entered", d.entered, 0);
  expect("no NVTX: recorded", n.recorded, 10);
  expect("no NVTX: abi_scope calls", n.sites_named_here, 10);
  // The enabled TU's instance saw none of the NVTX-less TU's scopes after its own collect().
  const tu_result e2 = run_enabled();
  expect("enabled again: recorded", e2.recorded, 20);
  std::printf(failures ? "FAILED\n" : "ok\n");
  return failures ? 1 : 0;
}
