// scopeprof: the registry's pool of free record chunks: full-size chunks come back here when reset()
// discards their records, and refills take them before allocating. Lock-free (a bounded ring), so a scope
// refilling its chunk never waits.
#pragma once

#include <scopeprof/config.hpp>
#include <scopeprof/detail/recorder.hpp>

#include <atomic>
#include <cstdint>

SCOPEPROF_NAMESPACE_BEGIN
namespace detail {

/// A full-size chunk from the pool, else a new one (nullptr when memory is short). No lock.
inline record_chunk* take_chunk(registry& r, std::uint32_t capacity) noexcept {
  record_chunk* c = nullptr;
  if (capacity == max_chunk_records && r.free_chunks.take(c)) return c;
  return record_chunk::make(capacity);
}

/// Give a chunk back: full-size ones are kept for reuse (up to the pool's capacity), the rest are freed.
inline void return_chunk(registry& r, record_chunk* c) noexcept {
  r.allocated_records.fetch_sub(c->capacity, std::memory_order_relaxed);
  if (c->capacity == max_chunk_records && r.free_chunks.put(c)) return;
  record_chunk::destroy(c);
}

}  // namespace detail
SCOPEPROF_NAMESPACE_END
