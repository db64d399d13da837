// scopeprof: where scopes go. Each thread appends fixed-size records to its own chunks; the collector
// reads them without stopping the writer. Counters are written only by their owner thread (plain stores,
// no read-modify-write), so the hot path takes no lock and allocates nothing between chunk refills.
#pragma once

#include <scopeprof/backends/nvtx.hpp>
#include <scopeprof/clock.hpp>
#include <scopeprof/config.hpp>
#include <scopeprof/detail/log.hpp>
#include <scopeprof/detail/text.hpp>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

SCOPEPROF_NAMESPACE_BEGIN

/// @brief Names longer than this many bytes are cut (at a UTF-8 boundary) and end in "...".
constexpr std::size_t max_name_bytes = 512;

namespace detail {

/// Everything known about one call site, registered once and never moved or freed.
struct site_info {
  std::string name;  // as given, cut to max_name_bytes (bytes kept as they are; writers sanitise)
  const char* file = "";
  const char* function = "";
  std::uint32_t line = 0;
  std::uint32_t id = 0;
  std::uint32_t colour = 0;
  nvtx_site nvtx;
  // Device timing policy for this site: 0 = host only, N = time every Nth entry (1 = every entry).
  std::atomic<std::uint32_t> device_every{1};
  bool host_only = false;  // PROF_SCOPE_HOST: sampling settings never turn device timing on
  bool per_thread_stream = false;  // the site's TU was built with the per-thread default stream
  std::atomic<std::uint64_t> device_entries{0};  // only counted when device_every > 1
};

}  // namespace detail

/// @brief A static call site: one per PROF_SCOPE in the source. Constant-initialised, so using it costs
/// no guard check; the heavier site_info is built on the first entry.
struct call_site {
  const char* name;
  const char* file;
  const char* function;
  std::uint32_t line;
  bool host_only;  // PROF_SCOPE_HOST: never device-timed
  // The default stream of the site's own translation unit (nvcc --default-stream per-thread defines
  // CUDA_API_PER_THREAD_DEFAULT_STREAM there): kept per site, so TUs built either way share one library.
  bool per_thread_stream;
  std::atomic<detail::site_info*> info{nullptr};

  constexpr call_site(const char* name_, const char* file_, const char* function_, std::uint32_t line_,
                      bool host_only_ = false, bool per_thread_stream_ = false) noexcept
      : name(name_), file(file_), function(function_), line(line_), host_only(host_only_),
        per_thread_stream(per_thread_stream_) {}
  call_site(const call_site&) = delete;
  call_site& operator=(const call_site&) = delete;
};

namespace detail {

/// One finished scope: 24 bytes, written at scope exit.
struct record {
  std::uint64_t begin_ticks;
  std::uint64_t end_ticks;
  std::uint32_t site;
  std::uint16_t depth;  // nesting level at entry on this thread (0 = outermost), saturated at 65535
  std::uint16_t flags;
};
static_assert(sizeof(record) == 24, "records are meant to stay small");

/// A block of records. A thread's first chunks are small (a thread that runs a few scopes should not
/// hold much memory); later ones have max_chunk_records.
struct chunk {
  std::uint64_t first = 0;     // record index (since the thread started) of records[0]
  std::uint32_t capacity = 0;
  record* records() noexcept { return reinterpret_cast<record*>(this + 1); }
  const record* records() const noexcept { return reinterpret_cast<const record*>(this + 1); }
};
static_assert(sizeof(chunk) % alignof(record) == 0, "records follow the chunk header");
constexpr std::uint32_t min_chunk_records = 64;
constexpr std::uint32_t max_chunk_records = 4096;

inline chunk* new_chunk(std::uint32_t capacity) noexcept {
  void* p = ::operator new(sizeof(chunk) + sizeof(record) * capacity, std::nothrow);
  if (p == nullptr) return nullptr;
  chunk* c = new (p) chunk;
  c->capacity = capacity;
  return c;
}
inline void delete_chunk(chunk* c) noexcept { ::operator delete(static_cast<void*>(c)); }

/// Device timing of one scope instance (CUDA builds): its event pair, resolved at collect time.
/// Handles are stored untyped so this file needs no CUDA header.
struct device_record {
  std::uint64_t host_index = 0;  // index of the host record this belongs to; ~0 if the host record was dropped
  void* begin_event = nullptr;
  void* end_event = nullptr;
  void* stream = nullptr;
  std::uint64_t capture_id = 0;  // non-zero: recorded while the stream was being captured into a graph
  std::int32_t device = -1;
  std::uint32_t reference = 0;   // generation of the reference event current when the scope began
  std::uint32_t state = 0;       // device_record_state, written by collect() under the registry's collect_mu
  std::int64_t begin_ns = 0;     // resolved times on the host timeline
  std::int64_t end_ns = 0;
};
enum device_record_state : std::uint32_t { dev_pending = 0, dev_resolved = 1, dev_captured = 2, dev_invalid = 3 };

struct device_chunk {
  static constexpr std::uint32_t capacity = 1024;
  std::uint64_t first = 0;
  device_record records[capacity];
};

/// Per-thread cache for runtime names: (call site, name) -> site_info. Grows only on a new name. Held by
/// the thread's buffer (not a thread_local of its own: that would give every including TU a TLS
/// initializer) and freed when the thread exits.
struct dynamic_name_cache {
  struct slot {
    std::uint64_t hash = 0;
    const call_site* cs = nullptr;
    site_info* info = nullptr;
  };
  std::vector<slot> slots;  // open addressing, power-of-two size
  std::size_t used = 0;
};

/// One thread's records and counters. Owned by the global registry, so it outlives its thread.
struct thread_buffer {
  // Written by the owner thread only (relaxed load + release store), read by collect().
  std::atomic<std::uint64_t> recorded{0};  // records written since the thread started
  std::atomic<std::uint64_t> dropped{0};   // scopes that ended but could not be stored
  std::atomic<std::uint64_t> entered{0};   // scopes begun since the thread started
  std::atomic<std::uint32_t> depth{0};     // scopes open right now (owner-only in practice: the record's depth)
  // Owner-only.
  record* cursor = nullptr;
  record* limit = nullptr;
  std::uint64_t full_epoch = ~0ull;  // allocation epoch in which a refill last failed
  device_record* device_cursor = nullptr;
  device_record* device_limit = nullptr;
  std::unique_ptr<dynamic_name_cache> dynamic_names;  // PROF_SCOPE_DYN lookups; freed at thread exit
  std::atomic<std::uint64_t> device_recorded{0};  // device records written since the thread started

  // Under mu: the chunk list (the owner appends on refill, reset() frees full ones).
  std::mutex mu;
  std::vector<chunk*> chunks;        // in record order; chunk::first says where each starts
  std::uint64_t recorded_floor = 0;  // records before this index were discarded by reset()
  std::uint64_t dropped_floor = 0;
  std::uint64_t entered_floor = 0;
  std::vector<device_chunk*> device_chunks;
  std::uint64_t device_floor = 0;  // device records before this index were discarded by reset()
  std::string name;
  // Under the registry mutex.
  std::uint32_t ordinal = 0;
  std::uint64_t os_id = 0;
  bool exited = false;
};

inline thread_local thread_buffer* t_buffer = nullptr;

enum : std::uint8_t { state_off = 0, state_on = 1, state_uninitialised = 2 };
/// Read at every scope entry (relaxed): on, off, or not yet initialised.
inline std::atomic<std::uint8_t> g_state{state_uninitialised};
/// Device timing of new call sites: 0 = host only, N = every Nth entry (SCOPEPROF_DEVICE_SAMPLE).
inline std::atomic<std::uint32_t> g_default_device_every{1};

/// Lock order: collect_mu, then mu, then a thread_buffer's mu. Scope threads take mu only to register a
/// new call site or thread and at thread exit, and a thread_buffer's mu only on a chunk refill: none of
/// them is ever held while collect() converts records or waits for the GPU.
struct registry {
  std::mutex collect_mu;  // one collect() or reset() at a time; the only lock held through their slow parts
  std::mutex mu;          // the lists below (sites, threads, names), held only to read or change them
  std::vector<std::unique_ptr<site_info>> sites;
  std::unordered_map<std::string, std::uint32_t> named_device_every;  // set_device_sampling(name, n), also for sites not seen yet
  std::unordered_map<std::string, site_info*> dynamic_sites;
  std::vector<thread_buffer*> threads;
  std::uint32_t next_ordinal = 0;

  std::mutex pool_mu;  // free chunks
  std::vector<chunk*> free_chunks;
  std::atomic<std::uint64_t> allocated_records{0};
  std::atomic<std::uint64_t> max_records{std::uint64_t{1} << 22};
  std::atomic<std::uint64_t> alloc_epoch{0};  // bumped whenever memory is freed or the cap raised
  std::atomic<std::uint64_t> device_records_held{0};     // device records in memory, all threads
  std::atomic<std::uint64_t> device_records_skipped{0};  // device timings not taken: too many held
  std::atomic<std::uint64_t> unattached_drops{0};  // scopes on threads whose buffer could not be made
  std::uint64_t unattached_floor = 0;              // under mu: reset() point

  detail::clock_anchor clock_start{};
  std::string report_target;  // SCOPEPROF_REPORT
};

/// The registry is created on first use and intentionally never destroyed: scopes in static destructors
/// and the report at exit must still find it.
inline registry& the_registry() {
  static registry* r = new registry();
  return *r;
}

inline void initialise() noexcept;  // defined in runtime.hpp
/// Registers the report at exit again (runtime.hpp) after something that may have initialised the CUDA
/// runtime, whose own teardown the report must run before.
inline void rearm_exit_report() noexcept;

/// Set by a backend that keeps per-thread state (the CUDA event cache): run on a thread's first scope,
/// before its begin time is read (no scope is open on the thread yet, so one-time set-up is charged to
/// no scope), and when the thread exits.
using thread_hook = void (*)() noexcept;
inline std::atomic<thread_hook> g_thread_attach_hook{nullptr};
inline std::atomic<thread_hook> g_thread_exit_hook{nullptr};

inline std::uint64_t current_os_thread_id() noexcept {
#if defined(__linux__)
  return static_cast<std::uint64_t>(::syscall(SYS_gettid));
#else
  return 0;
#endif
}

// Set once this thread's exit guard has run: later scopes on it (in other thread_local destructors) are
// counted as unattached drops instead of writing to a buffer that reset() may free.
inline thread_local bool t_thread_exited = false;

struct thread_exit_guard {
  ~thread_exit_guard() {
    thread_buffer* b = t_buffer;
    t_thread_exited = true;
    t_buffer = nullptr;
    if (b == nullptr) return;
    b->dynamic_names.reset();
    if (thread_hook exit_hook = g_thread_exit_hook.load(std::memory_order_acquire)) exit_hook();
    registry& r = the_registry();
    std::lock_guard<std::mutex> lock(r.mu);
    b->exited = true;
  }
};

/// First scope on a thread: make its buffer. Returns nullptr if memory is short or the thread is exiting.
SCOPEPROF_NOINLINE inline thread_buffer* attach_thread() noexcept {
  if (t_thread_exited) return nullptr;
  try {
    auto owned = std::make_unique<thread_buffer>();
    thread_buffer* b = owned.get();
    b->os_id = current_os_thread_id();
    {
      registry& r = the_registry();
      std::lock_guard<std::mutex> lock(r.mu);
      r.threads.reserve(r.threads.size() + 1);
      b->ordinal = r.next_ordinal++;
      r.threads.push_back(owned.release());
    }
    t_buffer = b;
    static thread_local thread_exit_guard guard;  // its destructor marks the buffer exited
    (void)guard;
    if (thread_hook attach_hook = g_thread_attach_hook.load(std::memory_order_acquire)) attach_hook();
    return b;
  } catch (...) {
    return nullptr;
  }
}

inline chunk* take_chunk(registry& r, std::uint32_t capacity) {
  if (capacity == max_chunk_records) {
    std::lock_guard<std::mutex> lock(r.pool_mu);
    if (!r.free_chunks.empty()) {
      chunk* c = r.free_chunks.back();
      r.free_chunks.pop_back();
      return c;
    }
  }
  return new_chunk(capacity);
}

/// Give a chunk back: full-size ones are kept for reuse (up to a few), the rest are freed.
inline void return_chunk(registry& r, chunk* c) noexcept {
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
  delete_chunk(c);
}

/// The current chunk is full (or there is none yet): get another one within the global cap.
SCOPEPROF_NOINLINE inline bool refill(thread_buffer& b) noexcept {
  registry& r = the_registry();
  const std::uint64_t epoch = r.alloc_epoch.load(std::memory_order_acquire);
  if (b.full_epoch == epoch) return false;  // still full: drop without taking a lock
  const std::uint64_t next_index = b.recorded.load(std::memory_order_relaxed);
  std::uint32_t capacity = min_chunk_records;
  while (capacity < max_chunk_records && capacity <= next_index) capacity *= 4;
  if (capacity > max_chunk_records) capacity = max_chunk_records;
  const std::uint64_t cap = r.max_records.load(std::memory_order_relaxed);
  std::uint64_t used = r.allocated_records.load(std::memory_order_relaxed);
  do {
    if (used + capacity > cap) {
      b.full_epoch = epoch;
      return false;
    }
  } while (!r.allocated_records.compare_exchange_weak(used, used + capacity, std::memory_order_relaxed));
  chunk* c = nullptr;
  try {
    c = take_chunk(r, capacity);
    if (c == nullptr) throw std::bad_alloc();
    c->first = next_index;
    std::lock_guard<std::mutex> lock(b.mu);
    b.chunks.push_back(c);
    b.cursor = c->records();
    b.limit = c->records() + c->capacity;
    return true;
  } catch (...) {
    if (c != nullptr) return_chunk(r, c);
    else r.allocated_records.fetch_sub(capacity, std::memory_order_relaxed);
    b.full_epoch = epoch;
    return false;
  }
}

constexpr std::uint64_t no_record = ~std::uint64_t{0};

SCOPEPROF_NOINLINE inline std::uint64_t append_slow(thread_buffer& b, const record& rec) noexcept {
  if (refill(b)) {
    *b.cursor++ = rec;
    const std::uint64_t index = b.recorded.load(std::memory_order_relaxed);
    b.recorded.store(index + 1, std::memory_order_release);
    return index;
  }
  b.dropped.store(b.dropped.load(std::memory_order_relaxed) + 1, std::memory_order_release);
  return no_record;
}

/// Store one finished scope and return its index (no_record if dropped); the caller then lowers the
/// depth (after, so a reader never sees both old).
SCOPEPROF_ALWAYS_INLINE std::uint64_t append(thread_buffer& b, const record& rec) noexcept {
  record* c = b.cursor;
  if (SCOPEPROF_LIKELY(c != b.limit)) {
    *c = rec;
    b.cursor = c + 1;
    const std::uint64_t index = b.recorded.load(std::memory_order_relaxed);
    b.recorded.store(index + 1, std::memory_order_release);
    return index;
  }
  return append_slow(b, rec);
}

/// Device records: a cap of their own (each holds two CUDA events until collect() resolves them).
constexpr std::uint64_t max_device_records = std::uint64_t{1} << 20;

/// Reserve the slot for one device record; nullptr when the cap is reached (the timing is skipped).
SCOPEPROF_NOINLINE inline device_record* device_slot_slow(thread_buffer& b) noexcept {
  registry& r = the_registry();
  if (r.device_records_held.fetch_add(device_chunk::capacity, std::memory_order_relaxed) + device_chunk::capacity >
      max_device_records) {
    r.device_records_held.fetch_sub(device_chunk::capacity, std::memory_order_relaxed);
    return nullptr;
  }
  try {
    auto* c = new device_chunk;
    c->first = b.device_recorded.load(std::memory_order_relaxed);
    std::lock_guard<std::mutex> lock(b.mu);
    b.device_chunks.push_back(c);
    b.device_cursor = c->records;
    b.device_limit = c->records + device_chunk::capacity;
    return b.device_cursor;
  } catch (...) {
    r.device_records_held.fetch_sub(device_chunk::capacity, std::memory_order_relaxed);
    return nullptr;
  }
}
SCOPEPROF_ALWAYS_INLINE device_record* device_slot(thread_buffer& b) noexcept {
  return b.device_cursor != b.device_limit ? b.device_cursor : device_slot_slow(b);
}
/// Publish the slot filled after device_slot().
SCOPEPROF_ALWAYS_INLINE void device_commit(thread_buffer& b) noexcept {
  ++b.device_cursor;
  b.device_recorded.store(b.device_recorded.load(std::memory_order_relaxed) + 1, std::memory_order_release);
}

inline std::string truncate_name(std::string_view name) {
  if (name.size() <= max_name_bytes) return std::string(name);
  std::string cut(utf8_prefix(name, max_name_bytes - 3));
  cut += "...";
  return cut;
}

inline site_info* make_site_locked(registry& r, std::string_view name, const call_site& cs) {
  auto info = std::make_unique<site_info>();
  info->name = truncate_name(name);
  info->file = cs.file ? cs.file : "";
  info->function = cs.function ? cs.function : "";
  info->line = cs.line;
  info->id = static_cast<std::uint32_t>(r.sites.size());
  info->colour = colour_for_name(info->name);
  info->host_only = cs.host_only;
  info->per_thread_stream = cs.per_thread_stream;
  std::uint32_t every = g_default_device_every.load(std::memory_order_relaxed);
  if (!r.named_device_every.empty()) {
    const auto named = r.named_device_every.find(info->name);
    if (named != r.named_device_every.end()) every = named->second;
  }
  info->device_every.store(cs.host_only ? 0u : every, std::memory_order_relaxed);
  nvtx_register_site(info->nvtx, info->name.c_str(), info->colour);
  r.sites.push_back(std::move(info));
  return r.sites.back().get();
}

/// First entry of a static call site: register it (once; concurrent first entries agree).
SCOPEPROF_NOINLINE inline site_info* register_site(call_site& cs) noexcept {
  try {
    registry& r = the_registry();
    std::lock_guard<std::mutex> lock(r.mu);
    site_info* info = cs.info.load(std::memory_order_acquire);
    if (info == nullptr) {
      info = make_site_locked(r, cs.name ? std::string_view(cs.name) : std::string_view("(null)"), cs);
      cs.info.store(info, std::memory_order_release);
    }
    return info;
  } catch (...) {
    return nullptr;
  }
}

SCOPEPROF_NOINLINE inline site_info* register_dynamic_site(call_site& cs, std::string_view name) noexcept {
  try {
    registry& r = the_registry();
    char addr[2 * sizeof(void*) + 4];
    std::snprintf(addr, sizeof addr, "%p", static_cast<const void*>(&cs));
    std::string key = addr;
    key += '\0';
    key.append(name.data(), name.size());
    std::lock_guard<std::mutex> lock(r.mu);
    auto it = r.dynamic_sites.find(key);
    if (it != r.dynamic_sites.end()) return it->second;
    site_info* info = make_site_locked(r, name, cs);
    r.dynamic_sites.emplace(std::move(key), info);
    return info;
  } catch (...) {
    return nullptr;
  }
}

inline site_info* lookup_dynamic_site(call_site& cs, std::string_view name) noexcept {
  thread_buffer* b = t_buffer;
  if (SCOPEPROF_UNLIKELY(b == nullptr) && (b = attach_thread()) == nullptr) return register_dynamic_site(cs, name);
  if (SCOPEPROF_UNLIKELY(!b->dynamic_names)) {
    b->dynamic_names.reset(new (std::nothrow) dynamic_name_cache());
    if (!b->dynamic_names) return register_dynamic_site(cs, name);
  }
  dynamic_name_cache& cache = *b->dynamic_names;
  const std::uint64_t h = fnv1a(name) ^ (reinterpret_cast<std::uintptr_t>(&cs) * 0x9E3779B97F4A7C15ull);
  if (!cache.slots.empty()) {
    const std::size_t mask = cache.slots.size() - 1;
    for (std::size_t i = h & mask;; i = (i + 1) & mask) {
      const auto& s = cache.slots[i];
      if (s.info == nullptr) break;
      if (s.hash == h && s.cs == &cs &&
          (s.info->name == name || (name.size() > max_name_bytes && s.info->name == truncate_name(name))))
        return s.info;
    }
  }
  site_info* info = register_dynamic_site(cs, name);
  if (info == nullptr) return nullptr;
  try {
    if ((cache.used + 1) * 2 > cache.slots.size()) {
      std::vector<dynamic_name_cache::slot> old;
      old.swap(cache.slots);
      cache.slots.assign(old.empty() ? 64 : old.size() * 2, {});
      const std::size_t mask = cache.slots.size() - 1;
      for (const auto& s : old)
        if (s.info != nullptr) {
          std::size_t i = s.hash & mask;
          while (cache.slots[i].info != nullptr) i = (i + 1) & mask;
          cache.slots[i] = s;
        }
    }
    const std::size_t mask = cache.slots.size() - 1;
    std::size_t i = h & mask;
    while (cache.slots[i].info != nullptr) i = (i + 1) & mask;
    cache.slots[i] = {h, &cs, info};
    ++cache.used;
  } catch (...) {
    // The cache is only a shortcut: without it the next entry asks the registry again.
  }
  return info;
}

}  // namespace detail
SCOPEPROF_NAMESPACE_END
