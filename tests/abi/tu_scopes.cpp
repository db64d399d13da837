// One translation unit of the mixed-switch programs: ten scopes and what this TU's own collect() sees.
// Compiled several times with different build switches (CMakeLists.txt); SCOPEPROF_ABI_TU names the copy.
#include <scopeprof.hpp>

#include <cstdint>

#define SCOPEPROF_ABI_FN_IMPL(tu) run_##tu
#define SCOPEPROF_ABI_FN(tu) SCOPEPROF_ABI_FN_IMPL(tu)

struct tu_result {
  std::uint64_t recorded;
  std::uint64_t entered;
  std::uint64_t sites_named_here;
};

tu_result SCOPEPROF_ABI_FN(SCOPEPROF_ABI_TU)() {
  for (int i = 0; i < 10; ++i) {
    PROF_SCOPE("abi_scope");
  }
  const scopeprof::report r = scopeprof::collect();
  const scopeprof::flat_row* row = r.find("abi_scope");
  return {r.counts().recorded, r.counts().entered, row != nullptr ? row->calls : 0};
}
