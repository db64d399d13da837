// scopeprof: the registry's pools of free chunks: full-size record chunks come back here when the drain or
// reset() discards their records, work-log chunks when the drain has taken their marks, and refills take
// them before allocating. Lock-free (bounded rings), so a scope refilling its chunk never waits.
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

/// A chunk for the work log: from the pool, else new, within max_work_marks; nullptr when neither.
inline work_chunk* take_work_chunk(registry& r) noexcept {
  work_chunk* c = nullptr;
  if (r.free_work_chunks.take(c)) return c;
  if (r.work_marks_held.fetch_add(work_chunk_marks, std::memory_order_relaxed) + work_chunk_marks > max_work_marks) {
    r.work_marks_held.fetch_sub(work_chunk_marks, std::memory_order_relaxed);
    return nullptr;
  }
  c = work_chunk::make(work_chunk_marks);
  if (c == nullptr) r.work_marks_held.fetch_sub(work_chunk_marks, std::memory_order_relaxed);
  return c;
}

/// A work chunk whose marks were all taken: back to the pool, else freed.
inline void return_work_chunk(registry& r, work_chunk* c) noexcept {
  if (r.free_work_chunks.put(c)) return;
  r.work_marks_held.fetch_sub(c->capacity, std::memory_order_relaxed);
  work_chunk::destroy(c);
}

}  // namespace detail
SCOPEPROF_NAMESPACE_END
