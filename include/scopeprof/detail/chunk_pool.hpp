// scopeprof: the registry's pool of free record chunks: full-size chunks come back here when reset()
// discards their records, and refills take them before allocating.
#pragma once

#include <scopeprof/config.hpp>
#include <scopeprof/detail/recorder.hpp>

#include <atomic>
#include <cstdint>
#include <mutex>

SCOPEPROF_NAMESPACE_BEGIN
namespace detail {

inline record_chunk* take_chunk(registry& r, std::uint32_t capacity) {
  if (capacity == max_chunk_records) {
    std::lock_guard<std::mutex> lock(r.pool_mu);
    if (!r.free_chunks.empty()) {
      record_chunk* c = r.free_chunks.back();
      r.free_chunks.pop_back();
      return c;
    }
  }
  return record_chunk::make(capacity);
}

/// Give a chunk back: full-size ones are kept for reuse (up to a few), the rest are freed.
inline void return_chunk(registry& r, record_chunk* c) noexcept {
  r.allocated_records.fetch_sub(c->capacity, std::memory_order_relaxed);
  if (c->capacity == max_chunk_records) {
    std::lock_guard<std::mutex> lock(r.pool_mu);
    if (r.free_chunks.size() < 64) {
      try {
        r.free_chunks.push_back(c);
        return;
      } catch (...) {
      }
    }
  }
  record_chunk::destroy(c);
}

}  // namespace detail
SCOPEPROF_NAMESPACE_END
