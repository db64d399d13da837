// The 30 ms parent / 20 ms child scenario shared by the timing tests. It records steady_clock at the same
// boundaries as the scopes, so a test can compare scopeprof's numbers with what really happened, and it
// repeats the run (up to 5 times) when the machine preempted it so much that the nominal durations do
// not hold (a 2-core CI machine under load does that).
#pragma once

#include <scopeprof.hpp>

#include <chrono>
#include <cstdint>

namespace sptest {

struct parent_child_run {
  scopeprof::report report;
  std::int64_t parent_total_ns = 0;  // steady_clock, inside the parent scope
  std::int64_t child_total_ns = 0;   // steady_clock, inside the child scope
  int attempts = 0;
};

inline void busy_until(std::chrono::steady_clock::time_point end) {
  while (std::chrono::steady_clock::now() < end) {
  }
}

inline parent_child_run run_parent_child() {
  using clock = std::chrono::steady_clock;
  using std::chrono::milliseconds;
  parent_child_run run;
  {
    // The first scope of a process pays one-time set-up inside it (a CUDA build probes for a device):
    // keep that out of the measured run.
    PROF_SCOPE("timing warm-up");
  }
  for (run.attempts = 1; run.attempts <= 5; ++run.attempts) {
    scopeprof::reset();
    clock::time_point p0, p1, c0, c1;
    {
      PROF_SCOPE("parent");
      p0 = clock::now();
      busy_until(p0 + milliseconds(10));
      {
        PROF_SCOPE("child");
        c0 = clock::now();
        busy_until(c0 + milliseconds(20));
        c1 = clock::now();
      }
      p1 = clock::now();
    }
    run.report = scopeprof::collect();
    run.parent_total_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(p1 - p0).count();
    run.child_total_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(c1 - c0).count();
    const bool undisturbed = run.parent_total_ns < 30'500'000 && run.child_total_ns < 20'500'000;
    if (undisturbed) break;
  }
  return run;
}

}  // namespace sptest
