// scopeprof: a per-thread, single-writer, append-only log kept in linked chunks. One type serves every log a
// scope writes to: its host records, its CUDA event pairs and its CUPTI correlation pairs.
//
// No lock on either side. The owner thread writes the slot at `cursor`, then publishes it by raising
// `published` (release); a new chunk is linked after the last one (release) before any item in it is
// published. The reader (collect() and reset(), one at a time under the registry's collect_mu) reads
// `published` (acquire) first and then walks the chunks from `head`: every item below the count it read
// sits in a chunk it can reach. Only the reader frees chunks, from the head, and never the last one (the
// owner may still write to it) unless the owner has exited. `floor` is the reader's own.
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
/// items()[0]; `next` is the chunk linked after this one (null while this is the last).
template <class T>
struct log_chunk {
  std::uint64_t first = 0;
  std::uint32_t capacity = 0;
  std::atomic<log_chunk*> next{nullptr};
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
  static void destroy(log_chunk* c) noexcept {
    c->~log_chunk();
    ::operator delete(static_cast<void*>(c));
  }
};

template <class T>
struct chunked_log {
  using chunk_type = log_chunk<T>;

  // Owner only.
  T* cursor = nullptr;
  T* limit = nullptr;
  chunk_type* tail = nullptr;  // the chunk written to
  // Written by the owner (relaxed load + release store), read by anyone.
  std::atomic<std::uint64_t> published{0};
  // Set by the owner's first adopt(), moved by the reader's discard_below().
  std::atomic<chunk_type*> head{nullptr};
  // Reader only: items below this index were discarded by reset().
  std::uint64_t floor = 0;

  chunked_log() = default;
  chunked_log(const chunked_log&) = delete;
  chunked_log& operator=(const chunked_log&) = delete;
  ~chunked_log() {
    for (chunk_type* c = head.load(std::memory_order_acquire); c != nullptr;) {
      chunk_type* next = c->next.load(std::memory_order_relaxed);
      chunk_type::destroy(c);
      c = next;
    }
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

  /// Owner: link `c` after the last chunk and write to it from now on. No lock, cannot fail.
  void adopt(chunk_type* c) noexcept {
    c->first = published.load(std::memory_order_relaxed);
    c->next.store(nullptr, std::memory_order_relaxed);
    if (tail != nullptr) tail->next.store(c, std::memory_order_release);
    else head.store(c, std::memory_order_release);
    tail = c;
    cursor = c->items();
    limit = c->items() + c->capacity;
  }

  /// Reader: the chunks from the head on, as they are now.
  std::vector<chunk_type*> chunk_list() const {
    std::vector<chunk_type*> out;
    for (chunk_type* c = head.load(std::memory_order_acquire); c != nullptr; c = c->next.load(std::memory_order_acquire))
      out.push_back(c);
    return out;
  }

  /// Calls fn(index, item) for the items with index in [from, to) held by `list` (chunk_list(), then or
  /// earlier: chunks are freed only by the reader), in order.
  template <class List, class Fn>
  static void for_each(const List& list, std::uint64_t from, std::uint64_t to, Fn&& fn) {
    for (auto* c : list) {
      const std::uint64_t hi = (std::min)(to, c->end());
      for (std::uint64_t i = (std::max)(from, c->first); i < hi; ++i) fn(i, c->items()[i - c->first]);
    }
  }
  /// Reader: the same over the chunks reachable now.
  template <class Fn>
  void for_each(std::uint64_t from, std::uint64_t to, Fn&& fn) const {
    for (chunk_type* c = head.load(std::memory_order_acquire); c != nullptr && c->first < to;
         c = c->next.load(std::memory_order_acquire)) {
      const std::uint64_t hi = (std::min)(to, c->end());
      for (std::uint64_t i = (std::max)(from, c->first); i < hi; ++i) fn(i, c->items()[i - c->first]);
    }
  }

  /// Reader: raise the floor to `to` (a count it saw published) and hand every chunk that holds only
  /// items below it to `release(chunk)`, from the head. The last chunk stays (its owner may write to it),
  /// unless `all`: the owner has exited.
  template <class Release>
  void discard_below(std::uint64_t to, bool all, Release&& release) noexcept {
    floor = (std::max)(floor, to);
    chunk_type* const first = head.load(std::memory_order_acquire);
    chunk_type* c = first;
    while (c != nullptr) {
      chunk_type* next = c->next.load(std::memory_order_acquire);
      if (!all && (next == nullptr || c->end() > to)) break;
      release(c);
      c = next;
    }
    if (c != first) head.store(c, std::memory_order_release);  // (an owner's first adopt() may race a no-op)
    if (all) {  // the owner is gone: nothing of it is left
      tail = nullptr;
      cursor = limit = nullptr;
    }
  }
};

}  // namespace detail
SCOPEPROF_NAMESPACE_END
