// Threads come and go, and collect() takes its time: a thread's first scope, a new call site and a thread's
// exit never wait for a collect() in progress, and threads that exited are released once reset() has
// consumed their records, so thread churn costs no memory.
#include "process_stats.hpp"

#include "internals.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>
#include "doctest_checks.hpp"  // last: doctest's CHECK, not glog's (unity build)

namespace {

std::size_t registered_threads() {
  auto& r = scopeprof::detail::the_registry();
  std::lock_guard<std::mutex> lock(r.mu);
  return r.threads.size();
}

void short_thread_batch(int threads) {
  std::vector<std::thread> batch;
  for (int i = 0; i < threads; ++i)
    batch.emplace_back([] {
      PROF_SCOPE("churn");
      PROF_SCOPE_DYN(std::string("churn_dynamic"));
    });
  for (auto& t : batch) t.join();
}

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

TEST_CASE("threads that exited are released once reset() consumed their records") {
  scopeprof::reset();
  const std::size_t before = registered_threads();
  for (int i = 0; i < 50; ++i) short_thread_batch(8);
  CHECK(registered_threads() == before + 400);
  SUBCASE("collect() still shows an exited thread's records until reset()") {
    const scopeprof::report r = scopeprof::collect();
    std::size_t exited_with_records = 0;
    for (const auto& t : r.threads())
      if (t.exited && t.counts.recorded == 2) ++exited_with_records;
    CHECK(exited_with_records == 400);
    CHECK(registered_threads() == before + 400);
  }
  scopeprof::reset();
  CHECK(registered_threads() <= before);
  const scopeprof::report r = scopeprof::collect();
  for (const auto& t : r.threads()) CHECK_FALSE(t.exited);
  CHECK(r.find("churn") == nullptr);
}

TEST_CASE("thread churn with reset() keeps memory flat") {
  scopeprof::reset();
  for (int i = 0; i < 25; ++i) short_thread_batch(8);  // warm-up: allocator pools, chunk cache
  scopeprof::reset();
  const long rss_before = sptest::vm_rss_kib();
  const std::uint64_t held_before = scopeprof::detail::the_registry().allocated_records.load();
  for (int round = 0; round < 10; ++round) {
    for (int i = 0; i < 50; ++i) short_thread_batch(8);
    scopeprof::reset();
  }
  const long rss_after = sptest::vm_rss_kib();
  MESSAGE("4000 short threads, reset every 400: RSS " << rss_before << " -> " << rss_after << " KiB");
  CHECK(scopeprof::detail::the_registry().allocated_records.load() == held_before);
  CHECK(registered_threads() <= 1);  // this thread, at most
  // Each thread held a buffer, a record chunk and a name cache: 4000 of them kept would be megabytes.
  // (Under a sanitizer, its own per-thread state and quarantine grow RSS: only the counts above apply.)
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  const bool rss_meaningful = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
  const bool rss_meaningful = false;
#else
  const bool rss_meaningful = true;
#endif
#else
  const bool rss_meaningful = true;
#endif
  if (rss_meaningful && rss_before > 0 && rss_after > 0) CHECK(rss_after - rss_before < 4096);
  const scopeprof::report r = scopeprof::collect();
  CHECK(r.chrome_trace().size() < 4096);
}

TEST_CASE("a thread's first scope, a new call site and a thread's exit never wait for collect()") {
  scopeprof::reset();
  // Enough records that collect() takes a while to convert and build them.
  for (int i = 0; i < 400000; ++i) {
    PROF_SCOPE("collect_load");
  }
  std::atomic<bool> collecting{false};
  std::int64_t collect_begin = 0, collect_end = 0;
  std::thread collector([&] {
    collecting = true;
    collect_begin = now_ns();
    const scopeprof::report r = scopeprof::collect();
    collect_end = now_ns();
    CHECK(r.counts().recorded >= 400000);
  });
  while (!collecting) std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  std::int64_t first_scope_done = 0, thread_done = 0;
  std::thread newcomer([&] {
    {
      PROF_SCOPE("newcomer_site");  // a new thread and a new call site: both register
      PROF_SCOPE_DYN(std::string("newcomer_dynamic"));
    }
    first_scope_done = now_ns();
  });
  newcomer.join();  // its exit marks its buffer exited
  thread_done = now_ns();
  collector.join();
  const double collect_ms = static_cast<double>(collect_end - collect_begin) / 1e6;
  const double newcomer_ms = static_cast<double>(first_scope_done - collect_begin) / 1e6;
  MESSAGE("collect(): " << collect_ms << " ms; newcomer's first scopes done " << newcomer_ms
                        << " ms after it began, thread joined at " << static_cast<double>(thread_done - collect_begin) / 1e6
                        << " ms");
  if (collect_ms < 100) {
    MESSAGE("collect() was too quick on this machine to show waiting; not judged");
  } else {
    CHECK(first_scope_done < collect_end);
    CHECK(thread_done < collect_end);
  }
  scopeprof::reset();
}
