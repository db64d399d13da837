// Consumer smoke test: one scope recorded, then collected.
#include <scopeprof.hpp>

#include <cstdio>

int main() {
  {
    PROF_SCOPE("x");
  }
  auto r = scopeprof::collect();
  if (r.counts().recorded != 1) {
    std::fprintf(stderr, "expected 1 recorded scope, got %lld\n",
                 static_cast<long long>(r.counts().recorded));
    return 1;
  }
  std::puts("scopeprof consumer: ok");
  return 0;
}
