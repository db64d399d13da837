// scopeprof: a bounded queue that many threads put into and take from without a lock. Each cell carries a
// sequence number that says whether it is ready to be written or read in the current lap, so a put or a
// take is one compare-and-swap on the shared position. Used for the per-device pools of free CUDA events:
// a scope refilling its thread's cache never waits for collect().
#pragma once

#include <scopeprof/config.hpp>

#include <atomic>
#include <cstddef>
#include <memory>

SCOPEPROF_NAMESPACE_BEGIN
namespace detail {

/// First in, first out; `put` reports full and `take` reports empty instead of waiting. Capacity is a
/// power of two, fixed at compile time.
template <class T, std::size_t Capacity>
class bounded_ring {
  static_assert(Capacity > 1 && (Capacity & (Capacity - 1)) == 0, "capacity must be a power of two");

 public:
  static constexpr std::size_t capacity = Capacity;

  bounded_ring() : cells_(new cell[Capacity]) {
    for (std::size_t i = 0; i < Capacity; ++i) cells_[i].seq.store(i, std::memory_order_relaxed);
  }

  bool put(T value) noexcept {
    std::size_t pos = tail_.load(std::memory_order_relaxed);
    for (;;) {
      cell& c = cells_[pos & (Capacity - 1)];
      const std::size_t seq = c.seq.load(std::memory_order_acquire);
      const auto lap = static_cast<std::ptrdiff_t>(seq - pos);
      if (lap == 0) {
        if (tail_.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) {
          c.value = value;
          c.seq.store(pos + 1, std::memory_order_release);
          return true;
        }
      } else if (lap < 0) {
        return false;  // full
      } else {
        pos = tail_.load(std::memory_order_relaxed);
      }
    }
  }

  bool take(T& value) noexcept {
    std::size_t pos = head_.load(std::memory_order_relaxed);
    for (;;) {
      cell& c = cells_[pos & (Capacity - 1)];
      const std::size_t seq = c.seq.load(std::memory_order_acquire);
      const auto lap = static_cast<std::ptrdiff_t>(seq - (pos + 1));
      if (lap == 0) {
        if (head_.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) {
          value = c.value;
          c.seq.store(pos + Capacity, std::memory_order_release);
          return true;
        }
      } else if (lap < 0) {
        return false;  // empty
      } else {
        pos = head_.load(std::memory_order_relaxed);
      }
    }
  }

 private:
  struct cell {
    std::atomic<std::size_t> seq{0};
    T value{};
  };
  std::unique_ptr<cell[]> cells_;
  alignas(64) std::atomic<std::size_t> head_{0};
  alignas(64) std::atomic<std::size_t> tail_{0};
};

}  // namespace detail
SCOPEPROF_NAMESPACE_END
