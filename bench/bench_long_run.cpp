// A long run at full scale: tens of millions of host scopes in one process, no collect() until the end.
// For each timeline policy (default: off, then last:100000) it prints what the tables counted, what was
// dropped, what the timeline kept, how much the resident set grew, and the time per scope against the
// same loop with recording switched off at run time (measured in the same process, just before).
//
//   scopeprof_bench_long_run [--scopes N] [--threads T] [--work-ns W] [--policy P]...
//   (defaults: 20000000, 2, 0, off and last:100000)
//
// Each thread runs steps of 10 scopes (a step scope around nine layer scopes, each with a little work, or W
// ns of spinning), the shape of a training loop. With W = 0 the scopes come back to back, as fast as the
// hot path allows: the hardest case for the drain, which folds each scope on another thread. Goals (issue 16): every scope counted, none dropped, RSS growth <= 64 MiB, and
// under last:N a timeline of at most N scopes. Exit status 1 when a goal is missed. It also prints the drain
// thread's own time per scope it folded in the background while the threads ran (on its own core: what a
// cheaper fold would save).
#include <scopeprof.hpp>
#include "drain_counters.hpp"  // the drain's own counters (scopes folded, time spent)

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace {

long rss_kib() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  return -1;
}

volatile std::uint64_t g_sink = 0;
std::int64_t g_work_ns = 0;

// A few ns of work that the compiler cannot drop, or g_work_ns of spinning.
inline void work(std::uint64_t i) {
  g_sink = g_sink + i * 2654435761u;
  if (g_work_ns == 0) return;
  const auto until = std::chrono::steady_clock::now() + std::chrono::nanoseconds(g_work_ns);
  while (std::chrono::steady_clock::now() < until) {
  }
}

// `steps` steps of 10 scopes: nine layers, each its own call site (as distinct PROF_SCOPE lines are).
#define SPBENCH_LAYER(k)       \
  {                            \
    PROF_SCOPE("layer " #k);   \
    work(s + k);               \
  }
void run_steps(std::uint64_t steps) {
  for (std::uint64_t s = 0; s < steps; ++s) {
    PROF_SCOPE("step");
    SPBENCH_LAYER(1) SPBENCH_LAYER(2) SPBENCH_LAYER(3) SPBENCH_LAYER(4) SPBENCH_LAYER(5)
    SPBENCH_LAYER(6) SPBENCH_LAYER(7) SPBENCH_LAYER(8) SPBENCH_LAYER(9)
  }
}
#undef SPBENCH_LAYER

// Wall seconds for `threads` threads running `steps` steps each.
double timed(unsigned threads, std::uint64_t steps) {
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) pool.emplace_back(run_steps, steps);
  for (auto& th : pool) th.join();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

struct options {
  std::uint64_t scopes = 20'000'000;
  unsigned threads = 2;
  std::vector<std::string> policies;
};

bool parse(int argc, char** argv, options& o) {
  for (int i = 1; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if (std::strcmp(argv[i], "--scopes") == 0 && has_value) {
      o.scopes = std::strtoull(argv[++i], nullptr, 10);
    } else if (std::strcmp(argv[i], "--threads") == 0 && has_value) {
      o.threads = static_cast<unsigned>(std::strtoul(argv[++i], nullptr, 10));
    } else if (std::strcmp(argv[i], "--work-ns") == 0 && has_value) {
      g_work_ns = std::strtoll(argv[++i], nullptr, 10);
    } else if (std::strcmp(argv[i], "--policy") == 0 && has_value) {
      o.policies.emplace_back(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: %s [--scopes N] [--threads T] [--work-ns W] [--policy all|off|last:N|steps:A-B]...\n", argv[0]);
      return false;
    }
  }
  if (o.policies.empty()) o.policies = {"off", "last:100000"};
  if (o.threads == 0 || o.scopes < 10ull * o.threads) {
    std::fprintf(stderr, "need at least one thread and 10 scopes per thread\n");
    return false;
  }
  return true;
}

// One policy: returns false when a goal is missed.
bool run_policy(const options& o, const std::string& policy) {
  const std::uint64_t steps = o.scopes / 10 / o.threads, scopes = steps * 10 * o.threads;
  if (!scopeprof::set_trace_policy(policy)) return false;
  scopeprof::set_enabled(true);
  timed(o.threads, 20'000);  // warm-up: threads' chunks, the pool, the fold's call paths
  scopeprof::reset();
  scopeprof::set_enabled(false);
  const double off_s = timed(o.threads, steps);  // the same loop with recording off
  scopeprof::set_enabled(true);
  const long before = rss_kib();
  const drain_counters drain_before = read_drain();
  const double on_s = timed(o.threads, steps);
  const drain_counters drain_after = read_drain();
  const long after = rss_kib();
  const auto c0 = std::chrono::steady_clock::now();
  const scopeprof::report r = scopeprof::collect();
  const double collect_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - c0).count();
  const long peak = rss_kib();
  std::uint64_t calls = 0;
  for (const auto& f : r.flat()) calls += f.calls;

  const double per_scope_on = on_s * 1e9 * o.threads / static_cast<double>(scopes);
  const double per_scope_off = off_s * 1e9 * o.threads / static_cast<double>(scopes);
  std::printf("\nSCOPEPROF_TRACE=%s: %llu scopes on %u threads, %lld ns of work per layer scope\n", policy.c_str(),
              static_cast<unsigned long long>(scopes), o.threads, static_cast<long long>(g_work_ns));
  std::printf("  tables: %llu calls; counts: recorded %llu, dropped %llu; timeline kept %llu, left out %llu\n",
              static_cast<unsigned long long>(calls), static_cast<unsigned long long>(r.counts().recorded),
              static_cast<unsigned long long>(r.counts().dropped), static_cast<unsigned long long>(r.timeline().kept),
              static_cast<unsigned long long>(r.timeline().left_out));
  std::printf("  RSS %ld -> %ld KiB over the run (+%.1f MiB); %ld KiB after collect() (%.1f ms)\n", before, after,
              static_cast<double>(after - before) / 1024.0, peak, collect_s * 1e3);
  std::printf("  per scope, per thread: %.2f ns recording, %.2f ns with recording off (same loop, same run): %.2fx\n",
              per_scope_on, per_scope_off, per_scope_on / per_scope_off);
  const std::uint64_t drained = drain_after.folded - drain_before.folded;
  if (drained > 0)
    std::printf("  drain: %llu scopes folded in the background while the threads ran, %.1f ns of drain time each\n",
                static_cast<unsigned long long>(drained),
                static_cast<double>(drain_after.pass_ns - drain_before.pass_ns) / static_cast<double>(drained));
  else
    std::printf("  drain: nothing folded in the background while the threads ran\n");

  bool ok = true;
  const auto goal = [&](const char* what, bool met) {
    std::printf("  goal: %-58s %s\n", what, met ? "met" : "NOT MET");
    ok = ok && met;
  };
  goal("the tables count every scope", calls == scopes && r.counts().recorded == scopes);
  goal("nothing dropped", r.counts().dropped == 0);
  goal("RSS grows by at most 64 MiB over the run", after - before <= 64 * 1024);
  if (policy.rfind("last:", 0) == 0)
    goal("the timeline holds at most N scopes", r.timeline().kept <= std::strtoull(policy.c_str() + 5, nullptr, 10));
  scopeprof::reset();
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  options o;
  if (!parse(argc, argv, o)) return 2;
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // lines as they come, also into a pipe
  std::printf("scopeprof long run: %s, drain thread %s\n", scopeprof::collect().sources().host.c_str(),
              std::getenv("SCOPEPROF_DRAIN") && std::strcmp(std::getenv("SCOPEPROF_DRAIN"), "0") == 0 ? "off" : "on");
  bool ok = true;
  for (const auto& p : o.policies) ok = run_policy(o, p) && ok;
  return ok ? 0 : 1;
}
