// The per-thread log (detail/chunked_log.hpp) without a lock on either side: one owner appends and links
// chunks while a reader walks what is published and discards whole chunks from the head, as collect() and
// reset() do. Every item the reader sees must be the one written at that index, nothing may be read twice
// or skipped, and every chunk must come back. Run under TSan by the CI's sanitizer step.
#if __has_include(<scopeprof/detail/chunked_log.hpp>)
#include <scopeprof/detail/chunked_log.hpp>
#else
#include <scopeprof.hpp>  // the single header carries it
#endif

#include <doctest/doctest.h>

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>
#include "doctest_checks.hpp"  // last: doctest's CHECK, not glog's (unity build)

namespace {

using scopeprof::detail::chunked_log;
using scopeprof::detail::log_chunk;

struct item {
  std::uint64_t index;
  std::uint64_t check;
};
constexpr std::uint64_t mix(std::uint64_t i) { return i * 0x9E3779B97F4A7C15ull ^ 0x5bd1e995u; }

}  // namespace

TEST_CASE("chunked_log: a reader walks and discards while the owner appends, without a lock") {
  chunked_log<item> log;
  constexpr std::uint64_t n = 200000;
  constexpr std::uint32_t capacity = 64;  // many chunks, many hand-overs
  std::atomic<std::uint64_t> made{0}, freed{0};
  std::atomic<bool> done{false};

  std::thread owner([&] {
    for (std::uint64_t i = 0; i < n; ++i) {
      if (!log.has_room()) {
        log_chunk<item>* c = log_chunk<item>::make(capacity);
        REQUIRE(c != nullptr);
        made.fetch_add(1, std::memory_order_relaxed);
        log.adopt(c);
      }
      log.push({i, mix(i)});
    }
    done.store(true, std::memory_order_release);
  });

  std::uint64_t next = 0;  // the reader's position: every index below it has been seen once
  bool bad = false;
  auto read_and_discard = [&] {
    const std::uint64_t count = log.published.load(std::memory_order_acquire);
    log.for_each(next, count, [&](std::uint64_t i, const item& x) {
      if (i != next || x.index != i || x.check != mix(i)) bad = true;
      ++next;
    });
    if (next != count) bad = true;
    log.discard_below(count, false, [&](log_chunk<item>* c) {
      freed.fetch_add(1, std::memory_order_relaxed);
      log_chunk<item>::destroy(c);
    });
  };
  while (!done.load(std::memory_order_acquire)) read_and_discard();
  owner.join();
  read_and_discard();
  CHECK_FALSE(bad);
  CHECK(next == n);
  CHECK(log.floor == n);
  // The owner's last chunk stays until the owner is gone.
  CHECK(freed.load() == made.load() - 1);
  log.discard_below(n, true, [&](log_chunk<item>* c) {
    freed.fetch_add(1, std::memory_order_relaxed);
    log_chunk<item>::destroy(c);
  });
  CHECK(freed.load() == made.load());
  CHECK(log.head.load() == nullptr);
}

TEST_CASE("chunked_log: a snapshot of the chunk list reads exactly the published range") {
  chunked_log<item> log;
  for (std::uint64_t i = 0; i < 1000; ++i) {
    if (!log.has_room()) log.adopt(log_chunk<item>::make(100));
    log.push({i, mix(i)});
  }
  const auto list = log.chunk_list();
  CHECK(list.size() == 10);
  std::uint64_t sum = 0, seen = 0;
  chunked_log<item>::for_each(list, 250, 750, [&](std::uint64_t i, const item& x) {
    CHECK(x.index == i);
    sum += i;
    ++seen;
  });
  CHECK(seen == 500);
  CHECK(sum == (250 + 749) * 500 / 2);
  // Discarding below 450 frees chunks [0,100) .. [300,400) and keeps the one holding 450.
  int freed = 0;
  log.discard_below(450, false, [&](log_chunk<item>* c) {
    ++freed;
    log_chunk<item>::destroy(c);
  });
  CHECK(freed == 4);
  CHECK(log.head.load()->first == 400);
}
