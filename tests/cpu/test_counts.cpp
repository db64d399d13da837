// Counting under threads: every scope entered is recorded, dropped or still in flight; per-thread counts
// add up; exited threads keep their records; collect() and reset() racing with running scopes always
// give well-formed reports.
#include "output_check.hpp"
#include "sanitizers.hpp"

#include "internals.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <random>
#include <string>
#include <thread>
#include <vector>
#include "doctest_checks.hpp"  // last: doctest's CHECK, not glog's (unity build)


namespace {

constexpr std::uint64_t scopes_per_thread = 100'000;  // also under TSan: the promise is 8 x 100k
constexpr int thread_count = 8;
constexpr std::uint32_t max_depth = 4;

// Enter `depth` nested scopes (1..4), one literal name per level.
void nest(std::uint32_t depth) {
  PROF_SCOPE("level0");
  if (depth < 2) return;
  PROF_SCOPE("level1");
  if (depth < 3) return;
  PROF_SCOPE("level2");
  if (depth < 4) return;
  PROF_SCOPE("level3");
}

// Exactly `total` scopes in groups of random nesting depth 1..4.
void run_scopes(std::uint64_t total, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<std::uint32_t> depth(1, max_depth);
  for (std::uint64_t done = 0; done < total;) {
    const std::uint32_t d = static_cast<std::uint32_t>(std::min<std::uint64_t>(depth(rng), total - done));
    nest(d);
    done += d;
  }
}

std::string worker_name(int i) { return "counts worker " + std::to_string(i); }

const scopeprof::thread_desc* find_thread(const scopeprof::report& r, const std::string& name) {
  for (const auto& t : r.threads())
    if (t.name == name) return &t;
  return nullptr;
}

// The report's own bookkeeping: totals are the sums over threads, the timeline holds what it kept of each
// thread's recorded scopes (all of them when it left none out), the flat table counts every recorded scope.
void check_bookkeeping(const scopeprof::report& r) {
  const auto& c = r.counts();
  CHECK(c.entered == c.recorded + c.dropped + c.in_flight);
  CHECK(c.recorded == r.timeline().kept + r.timeline().left_out);
  CHECK(r.instances().size() == r.timeline().kept);
  scopeprof::scope_counts sum;
  std::vector<std::uint64_t> per_thread(r.threads().size(), 0);
  for (const auto& s : r.instances())
    if (s.thread < per_thread.size()) ++per_thread[s.thread];
  for (std::size_t t = 0; t < r.threads().size(); ++t) {
    const auto& tc = r.threads()[t].counts;
    CHECK(tc.entered == tc.recorded + tc.dropped + tc.in_flight);
    if (r.timeline().left_out == 0) CHECK(tc.recorded == per_thread[t]);
    else CHECK(tc.recorded >= per_thread[t]);
    sum.entered += tc.entered;
    sum.recorded += tc.recorded;
    sum.dropped += tc.dropped;
    sum.in_flight += tc.in_flight;
  }
  // Scopes that ran on threads without a buffer count in the totals only, as dropped.
  CHECK(sum.recorded == c.recorded);
  CHECK(sum.in_flight == c.in_flight);
  CHECK(c.entered - sum.entered == c.dropped - sum.dropped);
  std::uint64_t flat_calls = 0;
  for (const auto& f : r.flat()) flat_calls += f.calls;
  CHECK(flat_calls == c.recorded);
  const std::string problem = sptest::check_instances(r);
  CHECK_MESSAGE(problem.empty(), problem);
}

}  // namespace

TEST_CASE("8 threads x 100k nested scopes: every scope is counted and exited threads keep their records") {
  scopeprof::reset();
  std::vector<std::thread> threads;
  for (int i = 0; i < thread_count; ++i)
    threads.emplace_back([i] {
      scopeprof::set_thread_name(worker_name(i));
      run_scopes(scopes_per_thread, 1234u + static_cast<std::uint32_t>(i));
    });
  for (auto& t : threads) t.join();

  const scopeprof::report r = scopeprof::collect();
  const auto& c = r.counts();
  const std::uint64_t expected = scopes_per_thread * thread_count;
  CHECK(c.entered == expected);
  CHECK(c.recorded + c.dropped == expected);
  CHECK(c.in_flight == 0);
  if (scopeprof::detail::the_registry().max_records.load() >= 4 * expected) CHECK(c.dropped == 0);
  check_bookkeeping(r);

  for (int i = 0; i < thread_count; ++i) {
    const scopeprof::thread_desc* t = find_thread(r, worker_name(i));
    REQUIRE_MESSAGE(t != nullptr, "no thread named " << worker_name(i));
    CHECK(t->exited);
    CHECK(t->os_id != 0);
    CHECK(t->counts.entered == scopes_per_thread);
    CHECK(t->counts.recorded + t->counts.dropped == scopes_per_thread);
    CHECK(t->counts.in_flight == 0);
  }
  // Depth in the tree is the nesting level each name was entered at.
  std::uint64_t wrong_depth = 0;
  for (const auto& s : r.instances()) {
    const std::string& name = r.sites()[s.site].name;
    if (name.size() == 6 && name.compare(0, 5, "level") == 0 && name[5] != static_cast<char>('0' + s.depth)) ++wrong_depth;
  }
  CHECK(wrong_depth == 0);
  CHECK(r.orphan_count() == 0);
  // A second report of the same finished data agrees with the first.
  const scopeprof::report again = scopeprof::collect();
  CHECK(again.counts().entered == c.entered);
  CHECK(again.counts().recorded == c.recorded);
}

TEST_CASE("collect() and reset() racing with running scopes give consistent, well-formed reports") {
  scopeprof::reset();
  std::atomic<bool> stop{false};
  std::atomic<int> started{0};
  // Scopes the workers may still run this round: keeps each report to a bounded size however slow
  // collect() is (sanitizers), while the workers still run during collect() and reset().
  std::atomic<std::int64_t> budget{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < thread_count; ++i)
    threads.emplace_back([&, i] {
      scopeprof::set_thread_name(worker_name(100 + i));
      started.fetch_add(1);
      std::uint32_t seed = 77u + static_cast<std::uint32_t>(i);
      while (!stop.load(std::memory_order_relaxed)) {
        if (budget.fetch_sub(100) > 0) run_scopes(100, seed++);
        else std::this_thread::sleep_for(std::chrono::microseconds(100));
      }
    });
  while (started.load() < thread_count) std::this_thread::yield();

#if SPTEST_TSAN
  const auto time_budget = std::chrono::milliseconds(1500);
  const std::int64_t round_budget = 4'000;
#else
  const auto time_budget = std::chrono::milliseconds(1000);
  const std::int64_t round_budget = 40'000;
#endif
  const auto start = std::chrono::steady_clock::now();
  int rounds = 0;
  std::uint64_t seen = 0, seen_in_flight = 0;
  for (; rounds < 200 && (rounds < 6 || std::chrono::steady_clock::now() - start < time_budget); ++rounds) {
    budget.store(round_budget);
    std::this_thread::sleep_for(std::chrono::microseconds(500 * (rounds % 7)));  // let the workers run
    const scopeprof::report r = scopeprof::collect();
    check_bookkeeping(r);
    seen += r.counts().recorded;
    seen_in_flight += r.counts().in_flight;
    for (int i = 0; i < thread_count; ++i) {
      const scopeprof::thread_desc* t = find_thread(r, worker_name(100 + i));
      if (t == nullptr) continue;  // not attached yet
      CHECK(!t->exited);
      CHECK(t->counts.in_flight <= max_depth);
    }
    // An orphan here can only be a child of a scope still open on its thread, or of one that was dropped.
    std::uint64_t bad_orphans = 0;
    for (const auto& s : r.instances()) {
      const auto& tc = r.threads()[s.thread].counts;
      if (s.orphan && tc.in_flight == 0 && tc.dropped == 0) ++bad_orphans;
    }
    CHECK_MESSAGE(bad_orphans == 0, "recorded " << r.counts().recorded << ", dropped " << r.counts().dropped);
    if (rounds % 2 == 1) scopeprof::reset();
  }
  stop = true;
  for (auto& t : threads) t.join();
  CHECK(rounds >= 6);
  INFO(rounds << " rounds, " << seen << " scopes seen, " << seen_in_flight << " seen in flight");
  CHECK(seen > 0);

  const scopeprof::report end = scopeprof::collect();
  check_bookkeeping(end);
  CHECK(end.counts().in_flight == 0);
  CHECK(end.orphan_count() == 0);
  for (int i = 0; i < thread_count; ++i) {
    const scopeprof::thread_desc* t = find_thread(end, worker_name(100 + i));
    REQUIRE(t != nullptr);
    CHECK(t->exited);
    CHECK(t->counts.in_flight == 0);
  }
}

TEST_CASE("stress: 16 thread slots x 1M scopes (250k under a sanitizer) in waves of threads that start and exit, "
          "with collect() and reset() running") {
  scopeprof::reset();
  // Under TSan the full count took 129 s of the suite's ~300 s; a quarter still gives every wave's threads
  // thousands of chunk refills beside running collect() and reset() calls.
  static constexpr std::uint64_t per_slot = SPTEST_SANITIZED ? 250'000 : 1'000'000;
  static constexpr int slots = 16;
  static constexpr int waves = 4;  // each slot's scopes are spread over 4 threads, started one after another
  std::atomic<int> slots_done{0};
  std::vector<std::thread> slot_threads;
  for (int s = 0; s < slots; ++s)
    slot_threads.emplace_back([&, s] {
      for (int w = 0; w < waves; ++w) {
        std::thread worker([s, w] { run_scopes(per_slot / waves, 9000u + static_cast<std::uint32_t>(s * waves + w)); });
        worker.join();
      }
      slots_done.fetch_add(1);
    });
  int reports = 0;
  while (slots_done.load() < slots) {
    const scopeprof::report r = scopeprof::collect();
    const auto& c = r.counts();
    CHECK(c.entered == c.recorded + c.dropped + c.in_flight);
    check_bookkeeping(r);
    ++reports;
    if (reports % 2 == 0) scopeprof::reset();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  for (auto& t : slot_threads) t.join();
  const scopeprof::report end = scopeprof::collect();
  CHECK(end.counts().entered == end.counts().recorded + end.counts().dropped);
  CHECK(end.counts().in_flight == 0);
  check_bookkeeping(end);
  INFO(reports << " reports taken while the threads ran");
  CHECK(reports >= 1);
  scopeprof::reset();
}
