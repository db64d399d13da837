// The drain: every finished scope is folded into the tables while the timeline (SCOPEPROF_TRACE) keeps
// only what it is asked to; record memory is handed back as the run goes on; the tables built from the
// fold agree with the tables built from the same records.
#include "output_check.hpp"
#include "process_stats.hpp"
#include "raw_builders.hpp"
#include "report_lookup.hpp"
#include "sanitizers.hpp"

#include "internals.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#if defined(__unix__)
#include <sys/wait.h>
#include <unistd.h>
#include "doctest_checks.hpp"  // last: doctest's CHECK, not glog's (unity build)
#endif

namespace {

using namespace scopeprof;

void spin_ns(std::int64_t ns) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::nanoseconds(ns);
  while (std::chrono::steady_clock::now() < until) {
  }
}

// `n` iterations of outer > {inner, inner > leaf}: 4 scopes each.
void nested_work(std::uint64_t n, std::int64_t leaf_ns = 0) {
  for (std::uint64_t i = 0; i < n; ++i) {
    PROF_SCOPE("drain outer");
    { PROF_SCOPE("drain inner"); }
    {
      PROF_SCOPE("drain inner");
      PROF_SCOPE("drain leaf");
      if (leaf_ns) spin_ns(leaf_ns);
    }
  }
}

using sptest::flat;

// Restores the timeline policy (SCOPEPROF_TRACE's, for the CTest run that sets it) and the record cap
// when a test ends.
struct policy_guard {
  std::uint64_t cap = detail::the_registry().max_records.load();
  std::string policy = collect().timeline().policy;
  ~policy_guard() {
    set_trace_policy(policy);
    set_max_records(cap);
    reset();
  }
};

// The fold's tables and the records' tables of the same post-order records are equal, field by field.
void check_same_rows(const report& a, const report& b) {
  REQUIRE(a.flat().size() == b.flat().size());
  for (const auto& fa : a.flat()) {
    const flat_row* fb = flat(b, fa.name);
    REQUIRE(fb != nullptr);
    CAPTURE(fa.name);
    CHECK(fa.calls == fb->calls);
    CHECK(fa.host_total_ns == fb->host_total_ns);
    CHECK(fa.host_self_ns == fb->host_self_ns);
    CHECK(fa.host.min == fb->host.min);
    CHECK(fa.host.max == fb->host.max);
    CHECK(fa.host.median == fb->host.median);
    CHECK(fa.host_self.p99 == fb->host_self.p99);
    CHECK(fa.host_time_pct == doctest::Approx(fb->host_time_pct));
    CHECK(fa.device_calls == fb->device_calls);
    CHECK(fa.device_total_ns == fb->device_total_ns);
    CHECK(fa.device_self_ns == fb->device_self_ns);
    CHECK(fa.device.median == fb->device.median);
    CHECK(fa.device.max == fb->device.max);
    CHECK(fa.device_self.p99 == fb->device_self.p99);
  }
  REQUIRE(a.tree().size() == b.tree().size());
  for (std::size_t i = 0; i < a.tree().size(); ++i) {
    CAPTURE(i);
    CHECK(a.tree()[i].name == b.tree()[i].name);
    CHECK(a.tree()[i].parent == b.tree()[i].parent);
    CHECK(a.tree()[i].depth == b.tree()[i].depth);
    CHECK(a.tree()[i].calls == b.tree()[i].calls);
    CHECK(a.tree()[i].host_total_ns == b.tree()[i].host_total_ns);
    CHECK(a.tree()[i].host_self_ns == b.tree()[i].host_self_ns);
    CHECK(a.tree()[i].host.p90 == b.tree()[i].host.p90);
    CHECK(a.tree()[i].device_calls == b.tree()[i].device_calls);
    CHECK(a.tree()[i].device_total_ns == b.tree()[i].device_total_ns);
    CHECK(a.tree()[i].device_self_ns == b.tree()[i].device_self_ns);
    CHECK(a.tree()[i].device_self.median == b.tree()[i].device_self.median);
  }
}

// One drain pass now, as collect() and the background thread run it.
void drain_now() {
  detail::registry& r = detail::the_registry();
  std::lock_guard<std::mutex> serial(r.collect_mu);
  detail::drain_pass(r, detail::the_drain(), detail::view_registry(r));
}

// The drain's counters, read under collect_mu as the drain thread writes them.
struct drain_counters {
  std::uint64_t passes, background_passes, folded, pass_ns_total, pass_ns_max;
};
drain_counters read_drain_counters() {
  std::lock_guard<std::mutex> serial(detail::the_registry().collect_mu);
  const detail::drain_state& d = detail::the_drain();
  return {d.passes, d.background_passes, d.folded_total, d.pass_ns_total, d.pass_ns_max};
}

}  // namespace

TEST_CASE("drain: the fold's tables equal the records' tables (random call trees, recursion by name, device spans on two streams)") {
  std::mt19937_64 rng(12345);
  for (int trial = 0; trial < 20; ++trial) {
    detail::raw_snapshot raw;
    for (int s = 0; s < 5; ++s) raw.sites.push_back({"site " + std::to_string(s % 4), "f.cpp", "f", 1u + s});
    raw.threads.resize(2);
    detail::path_tree tree;
    for (auto& th : raw.threads) {
      // A random forest written in post-order: each scope ends after its children.
      std::int64_t t = 1000;
      std::int64_t stream_clock[3] = {0, 5000, 9000};  // device time of streams 1 and 2 (each thread its own)
      std::vector<std::pair<detail::raw_instance, int>> open;  // record, children left
      detail::thread_fold fold;
      // Half the scopes get a device span on stream 1 or 2, begun and ended in stream order.
      const auto maybe_time = [&](detail::raw_instance& x) {
        if (rng() % 2 == 0) return;
        const std::uint64_t stream = 1 + rng() % 2;
        x = sptest::device_timed(x, 0, stream, stream_clock[stream] += static_cast<std::int64_t>(rng() % 30), 0);
      };
      const auto close = [&]() {
        detail::raw_instance x = open.back().first;
        open.pop_back();
        x.host_end_ns = t += static_cast<std::int64_t>(rng() % 50);
        detail::fold_input in{x.site, x.depth, x.host_begin_ns, x.host_end_ns};
        if (x.device == device_status::ok) {
          x.device_end_ns = stream_clock[x.stream] += 1 + static_cast<std::int64_t>(rng() % 40);
          in.timed = true;
          in.device = x.device_id;
          in.stream = x.stream;
          in.device_begin_ns = x.device_begin_ns;
          in.device_end_ns = x.device_end_ns;
        }
        th.records.push_back(x);
        fold.add(in, tree);
        if (!open.empty()) --open.back().second;
      };
      for (int roots = 0; roots < 30; ++roots) {
        detail::raw_instance x;
        x.site = static_cast<std::uint32_t>(rng() % 5);
        x.depth = 0;
        x.host_begin_ns = t += static_cast<std::int64_t>(rng() % 20);
        maybe_time(x);
        open.push_back({x, static_cast<int>(rng() % 4)});
        while (!open.empty()) {
          if (open.back().second > 0 && open.size() < 6) {
            detail::raw_instance c;
            c.site = static_cast<std::uint32_t>(rng() % 5);
            c.depth = static_cast<std::uint32_t>(open.size());
            c.host_begin_ns = t += 1 + static_cast<std::int64_t>(rng() % 20);
            maybe_time(c);
            open.push_back({c, static_cast<int>(rng() % 3)});
          } else {
            close();
          }
        }
      }
    }
    raw.counts.recorded = raw.counts.entered = raw.threads[0].records.size() + raw.threads[1].records.size();
    detail::raw_snapshot folded = raw;
    folded.folded.present = true;
    folded.folded.device = trial % 2 == 0;  // else the device figures come from the records
    folded.folded.tree = tree;
    const report from_records = detail::build_report(raw);
    const report from_fold = detail::build_report(folded);
    CAPTURE(trial);
    check_same_rows(from_fold, from_records);
  }
}

TEST_CASE("drain: SCOPEPROF_TRACE=off keeps no timeline and the tables count every scope") {
  policy_guard guard;
  reset();
  REQUIRE(set_trace_policy("off"));
  nested_work(50'000);
  const report r = collect();
  CHECK(r.timeline().policy == "off");
  CHECK(r.instances().empty());
  CHECK(r.counts().recorded == 200'000);
  CHECK(r.timeline().left_out == 200'000);
  REQUIRE(flat(r, "drain outer") != nullptr);
  CHECK(flat(r, "drain outer")->calls == 50'000);
  CHECK(flat(r, "drain inner")->calls == 100'000);
  CHECK(flat(r, "drain leaf")->calls == 50'000);
  // The tree keeps the paths: outer > inner (100k) > leaf (50k).
  REQUIRE(r.tree().size() == 3);
  CHECK(r.tree()[0].name == "drain outer");
  CHECK(r.tree()[1].name == "drain inner");
  CHECK(r.tree()[1].calls == 100'000);
  CHECK(r.tree()[2].name == "drain leaf");
  CHECK(r.tree()[2].parent == 1);
  // Self times add up to the outer total (within the ns rounding of each figure from clock ticks).
  const std::int64_t selves = r.tree()[0].host_self_ns + r.tree()[1].host_self_ns + r.tree()[2].host_self_ns;
  CHECK(std::llabs(selves - r.tree()[0].host_total_ns) <= 3);
  CHECK(r.warnings().find("SCOPEPROF_TRACE=off") != std::string::npos);
  // The text tables come from the tables, not the (empty) timeline.
  CHECK(r.to_string().find("drain leaf") != std::string::npos);
  CHECK(r.to_string().find("(no finished scopes)") == std::string::npos);
  const std::string problem = sptest::check_all_outputs(r);
  CHECK_MESSAGE(problem.empty(), problem);
}

TEST_CASE("drain: last:N keeps the newest N scopes of the process") {
  policy_guard guard;
  reset();
  REQUIRE(set_trace_policy("last:1000"));
  nested_work(1000);  // 4000 scopes
  std::int64_t newest_end = 0;
  {
    PROF_SCOPE("drain newest");
  }
  const report r = collect();
  CHECK(r.counts().recorded == 4001);
  CHECK(r.instances().size() == 1000);
  CHECK(r.timeline().kept == 1000);
  CHECK(r.timeline().left_out == 3001);
  CHECK(flat(r, "drain outer")->calls == 1000);
  bool saw_newest = false;
  for (const auto& s : r.instances()) {
    newest_end = (std::max)(newest_end, s.host_end_ns);
    saw_newest |= r.sites()[s.site].name == "drain newest";
  }
  CHECK(saw_newest);
  const std::string problem = sptest::check_all_outputs(r);
  CHECK_MESSAGE(problem.empty(), problem);
  CHECK_FALSE(set_trace_policy("last:0"));
  CHECK_FALSE(set_trace_policy("last:x"));
  CHECK_FALSE(set_trace_policy("steps:5-2"));
  CHECK_FALSE(set_trace_policy("sometimes"));
  CHECK(collect().timeline().policy == "last:1000");  // unchanged by the refused values
}

TEST_CASE("drain: steps:A-B keeps the scopes of those steps") {
  policy_guard guard;
  reset();
  next_step();  // a fresh step number base: marks are process-wide
  const std::uint64_t base = detail::the_registry().next_step.load();
  const std::string window = "steps:" + std::to_string(base + 3) + "-" + std::to_string(base + 5);
  REQUIRE(set_trace_policy(window));
  for (int step = 0; step < 10; ++step) {
    next_step();
    for (int i = 0; i < 10; ++i) {
      PROF_SCOPE("drain step scope");
    }
  }
  next_step();
  const report r = collect();
  CHECK(r.timeline().policy == window);
  CHECK(flat(r, "drain step scope")->calls == 100);
  CHECK(r.instances().size() == 30);
  std::int64_t open = 0, close = 0;
  for (const auto& s : r.steps()) {
    if (s.index == base + 3) open = s.begin_ns;
    if (s.index == base + 5) close = s.end_ns;
  }
  REQUIRE(open > 0);
  REQUIRE(close > open);
  for (const auto& s : r.instances()) {
    CHECK(s.host_begin_ns >= open);
    CHECK(s.host_end_ns <= close);
  }
}

TEST_CASE("drain: past SCOPEPROF_MAX_RECORDS the timeline stops growing and says so, the tables go on") {
  policy_guard guard;
  reset();
  REQUIRE(set_trace_policy("all"));
  const std::uint64_t cap = detail::the_registry().allocated_records.load() + 20'000;
  set_max_records(cap);
  // 100k scopes in batches the waiting records' cap holds, each folded before the next: none is dropped,
  // so what the timeline does not keep is left out of it, not lost.
  for (int batch = 0; batch < 20; ++batch) {
    nested_work(1'250, 0);
    drain_now();
  }
  const report r = collect();
  CHECK(r.counts().dropped == 0);
  CHECK(r.counts().recorded == 100'000);
  CHECK(r.timeline().kept == cap);
  CHECK(r.instances().size() <= cap);
  CHECK(r.timeline().kept + r.timeline().left_out == r.counts().recorded);
  CHECK(r.timeline().left_out > 0);
  std::uint64_t calls = 0;
  for (const auto& f : r.flat()) calls += f.calls;
  CHECK(calls == r.counts().recorded);
  CHECK(r.warnings().find("the timeline stopped growing") != std::string::npos);
}

TEST_CASE("drain: a long run with the timeline off holds flat memory and loses no scope") {
  policy_guard guard;
  reset();
  REQUIRE(set_trace_policy("off"));
  // The waiting records are capped: only a drain that folds in the background lets every scope be counted.
  set_max_records(detail::the_registry().allocated_records.load() + 262'144);
  nested_work(20'000, 1000);  // warm-up: pools, the fold's paths
  reset();
  const bool thread_on = detail::the_registry().drain_thread.load() == detail::drain_running;
  const long before = sptest::vm_rss_kib();
  // 2M scopes in batches of 100k, each well under the cap. Whether a drain keeps up with a producer at full
  // speed depends on the machine (bench_long_run prints it); here the producer lets the drain thread catch up
  // after each batch, so the check is that the background thread alone folds everything, at flat memory.
  constexpr std::uint64_t batches = 20, per_batch = 25'000;  // 4 scopes per iteration
  const std::uint64_t folded_at_start = read_drain_counters().folded;
  std::uint64_t longest_wait_ms = 0;
  for (std::uint64_t b = 1; b <= batches; ++b) {
    nested_work(per_batch, 1000);
    const auto t0 = std::chrono::steady_clock::now();
    // A thread's newest record may be held back by a pass, hence the slack of a few records.
    while (thread_on && read_drain_counters().folded + 8 < folded_at_start + 4 * per_batch * b &&
           std::chrono::steady_clock::now() - t0 < std::chrono::seconds(30)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0);
    longest_wait_ms = std::max<std::uint64_t>(longest_wait_ms, static_cast<std::uint64_t>(waited.count()));
  }
  const long after = sptest::vm_rss_kib();
  const report r = collect();
  const std::uint64_t scopes = 4 * per_batch * batches;
  CHECK(r.counts().entered == scopes);
  CHECK(r.counts().recorded + r.counts().dropped == scopes);
  std::uint64_t calls = 0;
  for (const auto& f : r.flat()) calls += f.calls;
  CHECK(calls == r.counts().recorded);
  const drain_counters c = read_drain_counters();
  MESSAGE("2M scopes, timeline off: RSS " << before << " -> " << after << " KiB, dropped " << r.counts().dropped
                                          << ", drain thread " << std::string(thread_on ? "on" : "off") << ", passes "
                                          << c.background_passes << ", folded " << c.folded << " in "
                                          << c.pass_ns_total / 1000000 << " ms (longest pass " << c.pass_ns_max / 1000
                                          << " us), longest wait for the drain " << longest_wait_ms << " ms");
  if (thread_on && !SPTEST_SANITIZED) {
    CHECK(r.counts().dropped == 0);
    CHECK_MESSAGE(after - before < 16 * 1024, "VmRSS grew by " << (after - before) << " KiB");
  }
}

TEST_CASE("drain: the background thread folds without collect(), unless SCOPEPROF_DRAIN=0") {
  policy_guard guard;
  reset();
  const char* env = std::getenv("SCOPEPROF_DRAIN");
  const bool off = env != nullptr && std::string(env) == "0";
  nested_work(10'000);  // several chunk refills: the first one starts the thread
  const std::uint8_t state = detail::the_registry().drain_thread.load();
  if (off) {
    CHECK(state == detail::drain_off);
    return;
  }
  REQUIRE(state == detail::drain_running);
  const std::uint64_t passes = read_drain_counters().background_passes;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (read_drain_counters().background_passes == passes && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  CHECK(read_drain_counters().background_passes > passes);
}

// ThreadSanitizer ends a child of a multi-threaded fork() that starts a thread (die_after_fork).
#if defined(__unix__) && !SPTEST_TSAN
TEST_CASE("drain: after fork() the child records, folds and collects on its own") {
  policy_guard guard;
  reset();
  nested_work(10'000);  // the parent's drain thread is running now
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    nested_work(10'000);
    const report r = collect();
    const bool ok = flat(r, "drain outer") != nullptr && flat(r, "drain outer")->calls == 20'000 &&
                    r.counts().recorded == 80'000;
    std::_Exit(ok ? 0 : 1);
  }
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(collect().counts().recorded == 40'000);
}
#endif

TEST_CASE("drain: reset() inside a scope forgets its children but not their time (timeline off)") {
  policy_guard guard;
  reset();
  REQUIRE(set_trace_policy("off"));
  {
    PROF_SCOPE("drain parent");
    for (int i = 0; i < 3; ++i) {
      PROF_SCOPE("drain child");
      spin_ns(2'000'000);
    }
    reset();  // forgets the children; the parent is still open
  }
  const report r = collect();
  REQUIRE(flat(r, "drain parent") != nullptr);
  CHECK(flat(r, "drain child") == nullptr);
  const flat_row& p = *flat(r, "drain parent");
  CHECK(p.calls == 1);
  CHECK(p.host_total_ns >= 6'000'000);
  CHECK(p.host_self_ns < p.host_total_ns - 5'000'000);  // the children's 6 ms are not its own
}
