// scopeprof: a per-thread, single-writer, append-only log kept in chunks. One type serves every log a
// scope writes to: its host records, its CUDA event pairs and its CUPTI correlation pairs.
//
// The owner thread appends without a lock: it writes the slot at `cursor`, then publishes it by raising
// `published` (release). Readers (collect(), reset()) read `published` (acquire) first and then copy the
// chunk list under the owner's mutex, so every item below the count they read sits in a chunk they hold.
// Only reset() frees chunks, and never the one the owner writes to (unless the thread has exited).
//
// Lock discipline: `chunks` and `floor` are guarded by a mutex the log's holder names (a thread_buffer
// guards its two logs with its own mutex); the caller holds it around adopt(), discard_below() and any
// read of the chunk list.
#pragma once

#include <scopeprof/config.hpp>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <new>
#include <type_traits>
#include <vector>

SCOPEPROF_NAMESPACE_BEGIN
namespace detail {

/// A block of `capacity` items of T, laid out right after this header. `first` is the log index of
/// items()[0].
template <class T>
struct log_chunk {
  std::uint64_t first = 0;
  std::uint32_t capacity = 0;
  T* items() noexcept { return reinterpret_cast<T*>(this + 1); }
  const T* items() const noexcept { return reinterpret_cast<const T*>(this + 1); }
  std::uint64_t end() const noexcept { return first + capacity; }

  /// A chunk with room for `capacity` items, or nullptr when memory is short. Items with a default
  /// member initialiser are constructed; plain ones are left for the writer to fill.
  static log_chunk* make(std::uint32_t capacity) noexcept {
    static_assert(std::is_trivially_destructible<T>::value, "log items are never destroyed one by one");
    static_assert(sizeof(log_chunk) % alignof(T) == 0, "items follow the chunk header");
    void* p = ::operator new(sizeof(log_chunk) + sizeof(T) * capacity, std::nothrow);
    if (p == nullptr) return nullptr;
    auto* c = new (p) log_chunk;
    c->capacity = capacity;
    if (!std::is_trivially_default_constructible<T>::value)
      for (std::uint32_t i = 0; i < capacity; ++i) new (c->items() + i) T();
    return c;
  }
  static void destroy(log_chunk* c) noexcept { ::operator delete(static_cast<void*>(c)); }
};

template <class T>
struct chunked_log {
  using chunk_type = log_chunk<T>;

  // Owner only.
  T* cursor = nullptr;
  T* limit = nullptr;
  // Written by the owner (relaxed load + release store), read by anyone.
  std::atomic<std::uint64_t> published{0};
  // Under the holder's mutex.
  std::vector<chunk_type*> chunks;  // in log order
  std::uint64_t floor = 0;          // items below this index were discarded by reset()

  chunked_log() = default;
  chunked_log(const chunked_log&) = delete;
  chunked_log& operator=(const chunked_log&) = delete;
  ~chunked_log() {
    for (chunk_type* c : chunks) chunk_type::destroy(c);
  }

  /// Owner: is there a free slot in the current chunk?
  SCOPEPROF_ALWAYS_INLINE bool has_room() const noexcept { return cursor != limit; }
  /// Owner: publish the slot at `cursor` (filled by the caller); returns its index.
  SCOPEPROF_ALWAYS_INLINE std::uint64_t publish() noexcept {
    ++cursor;
    const std::uint64_t index = published.load(std::memory_order_relaxed);
    published.store(index + 1, std::memory_order_release);
    return index;
  }
  /// Owner: append one item (the caller checked has_room()); returns its index.
  SCOPEPROF_ALWAYS_INLINE std::uint64_t push(const T& item) noexcept {
    *cursor = item;
    return publish();
  }

  /// Owner, holder's mutex held: make `c` the chunk written next. Throws only if the list cannot grow (the
  /// caller keeps `c` then).
  void adopt(chunk_type* c) {
    c->first = published.load(std::memory_order_relaxed);
    chunks.push_back(c);
    cursor = c->items();
    limit = c->items() + c->capacity;
  }

  /// Calls fn(index, item) for the items with index in [from, to) held by `list` (this log's chunk list,
  /// or a copy of it), in order. Items are const when the list holds pointers to const chunks.
  template <class List, class Fn>
  static void for_each(const List& list, std::uint64_t from, std::uint64_t to, Fn&& fn) {
    for (auto* c : list) {
      const std::uint64_t hi = (std::min)(to, c->end());
      for (std::uint64_t i = (std::max)(from, c->first); i < hi; ++i) fn(i, c->items()[i - c->first]);
    }
  }

  /// Holder's mutex held: raise the floor to `to` (a count the reader saw published) and hand every
  /// chunk that holds only items below it to `release(chunk)`. The chunk the owner writes to stays,
  /// unless `all` (the owner has exited).
  template <class Release>
  void discard_below(std::uint64_t to, bool all, Release&& release) noexcept {
    floor = (std::max)(floor, to);
    std::size_t n = 0;
    if (all) n = chunks.size();
    else
      while (n + 1 < chunks.size() && chunks[n]->end() <= to) ++n;
    for (std::size_t i = 0; i < n; ++i) release(chunks[i]);
    chunks.erase(chunks.begin(), chunks.begin() + static_cast<std::ptrdiff_t>(n));
    if (all) cursor = limit = nullptr;
  }
};

}  // namespace detail
SCOPEPROF_NAMESPACE_END
