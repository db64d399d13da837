// The README's usage example: nested scopes, host time only (device columns appear with CUDA builds).
#include <scopeprof.hpp>

#include <chrono>
#include <iostream>
#include <thread>

namespace {
void busy(std::chrono::microseconds d) {
  const auto end = std::chrono::steady_clock::now() + d;
  while (std::chrono::steady_clock::now() < end) {
  }
}
void load() {
  PROF_FUNCTION();
  busy(std::chrono::microseconds(300));
}
}  // namespace

int main() {
  for (int step = 0; step < 10; ++step) {
    PROF_SCOPE("step");
    load();
    {
      PROF_SCOPE("compute");
      busy(std::chrono::microseconds(700));
    }
  }
  const scopeprof::report r = scopeprof::collect();
  r.print(std::cout);
  if (auto ok = r.write_chrome_trace("quickstart.trace.json"); !ok) std::cerr << ok.message() << "\n";
}
