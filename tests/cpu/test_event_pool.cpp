// The per-device pool of free CUDA events (backends/cuda_events.hpp) is a lock-free bounded queue: a
// scope refilling its thread's cache must never wait for collect(). Checked here with fake handles
// (never passed to CUDA), so it runs, also under TSan, on machines without a GPU.
#include "internals.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <memory>
#include <cstdint>
#include <thread>
#include <vector>
#include "doctest_checks.hpp"  // last: doctest's CHECK, not glog's (unity build)

#if SCOPEPROF_WITH_CUDA

namespace {
using scopeprof::detail::event_pool;
cudaEvent_t fake(std::uintptr_t i) { return reinterpret_cast<cudaEvent_t>(i + 1); }
std::uintptr_t index_of(cudaEvent_t e) { return reinterpret_cast<std::uintptr_t>(e) - 1; }
}  // namespace

TEST_CASE("event_pool: first in, first out; empty and full are reported, not overrun") {
  auto pool = std::make_unique<event_pool>();
  cudaEvent_t e = nullptr;
  CHECK_FALSE(pool->take(e));
  for (std::uintptr_t i = 0; i < event_pool::capacity; ++i) REQUIRE(pool->put(fake(i)));
  CHECK_FALSE(pool->put(fake(event_pool::capacity)));
  for (std::uintptr_t i = 0; i < event_pool::capacity; ++i) {
    REQUIRE(pool->take(e));
    REQUIRE(index_of(e) == i);
  }
  CHECK_FALSE(pool->take(e));
  // Wrapped around: still consistent.
  for (std::uintptr_t i = 0; i < 10; ++i) REQUIRE(pool->put(fake(i)));
  for (std::uintptr_t i = 0; i < 10; ++i) {
    REQUIRE(pool->take(e));
    CHECK(index_of(e) == i);
  }
}

TEST_CASE("event_pool: 4 threads giving back and 4 taking move every handle exactly once") {
  auto pool = std::make_unique<event_pool>();
  constexpr std::uintptr_t per_producer = 200000;
  constexpr int producers = 4, consumers = 4;
  std::vector<std::atomic<std::uint8_t>> seen(per_producer * producers);
  std::atomic<std::uint64_t> taken{0};
  std::vector<std::thread> threads;
  for (int p = 0; p < producers; ++p)
    threads.emplace_back([&, p] {
      for (std::uintptr_t i = 0; i < per_producer; ++i)
        while (!pool->put(fake(static_cast<std::uintptr_t>(p) * per_producer + i))) std::this_thread::yield();
    });
  for (int c = 0; c < consumers; ++c)
    threads.emplace_back([&] {
      cudaEvent_t e = nullptr;
      while (taken.load() < per_producer * producers) {
        if (pool->take(e)) {
          seen[index_of(e)].fetch_add(1);
          taken.fetch_add(1);
        } else {
          std::this_thread::yield();
        }
      }
    });
  for (auto& t : threads) t.join();
  std::uint64_t once = 0, other = 0;
  for (auto& s : seen) (s.load() == 1 ? once : other) += 1;
  CHECK(once == per_producer * producers);
  CHECK(other == 0);
  cudaEvent_t e = nullptr;
  CHECK_FALSE(pool->take(e));
}

#else
TEST_CASE("event_pool: not built without CUDA") { MESSAGE("skipped: SCOPEPROF_WITH_CUDA=0"); }
#endif
