// scopeprof: where scopes go. Each thread appends fixed-size records to its own chunks; the collector
// reads them without stopping the writer. Counters are written only by their owner thread (plain stores,
// no read-modify-write), so the hot path takes no lock and allocates nothing between chunk refills.
#pragma once

#include <scopeprof/backends/nvtx.hpp>
#include <scopeprof/clock.hpp>
#include <scopeprof/config.hpp>
#include <scopeprof/detail/bounded_ring.hpp>
#include <scopeprof/detail/chunked_log.hpp>
#include <scopeprof/detail/log.hpp>
#include <scopeprof/detail/text.hpp>
#include <scopeprof/detail/work_mark.hpp>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

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

/// Records come in chunks: a thread's first ones are small (a thread that runs a few scopes should not
/// hold much memory); later ones have max_chunk_records.
using record_chunk = log_chunk<record>;
constexpr std::uint32_t min_chunk_records = 64;
constexpr std::uint32_t max_chunk_records = 4096;

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
/// dev_span_only: resolved without a place on the host timeline (no timeline could keep it when it was
/// resolved): end_ns - begin_ns is the span, begin_ns is 0.
enum device_record_state : std::uint32_t {
  dev_pending = 0,
  dev_resolved = 1,
  dev_captured = 2,
  dev_invalid = 3,
  dev_span_only = 4,
};

using device_chunk = log_chunk<device_record>;
constexpr std::uint32_t device_chunk_records = 1024;

/// One next_step() call: its process-wide sequence number, the host counter then, and how many scopes
/// were open on the calling thread (a step boundary inside a scope cuts that scope).
struct step_mark {
  std::uint64_t sequence;
  std::uint64_t ticks;
  std::uint32_t open_scopes;
  std::uint32_t reserved;
};
using step_chunk = log_chunk<step_mark>;
constexpr std::uint32_t step_chunk_marks = 256;

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
  chunked_log<record> records;             // published = records written since the thread started
  std::atomic<std::uint64_t> dropped{0};   // scopes that ended but could not be stored
  std::atomic<std::uint64_t> entered{0};   // scopes begun since the thread started
  std::atomic<std::uint32_t> depth{0};     // scopes open right now (owner-only in practice: the record's depth)
  // Owner-only.
  std::uint64_t full_epoch = ~0ull;  // allocation epoch in which a refill last failed
  chunked_log<device_record> device;  // CUDA event pairs of device-timed scopes
  chunked_log<step_mark> steps;       // next_step() calls on this thread
  chunked_log<work_mark> work;        // declared work (PROF_SCOPE_WORK, add_work)
  std::unique_ptr<dynamic_name_cache> dynamic_names;  // PROF_SCOPE_DYN lookups; freed at thread exit

  // collect() and reset() only (under the registry's collect_mu): where the last reset() left the counters.
  std::uint64_t recorded_floor = 0;
  std::uint64_t dropped_floor = 0;
  std::uint64_t entered_floor = 0;
  std::mutex mu;  // the name (set_thread_name() on the owner, collect() reads it); no scope takes it
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

  bounded_ring<record_chunk*, 64> free_chunks;  // full-size chunks for reuse
  std::atomic<std::uint64_t> allocated_records{0};
  std::atomic<std::uint64_t> max_records{std::uint64_t{1} << 22};
  std::atomic<std::uint64_t> alloc_epoch{0};  // bumped whenever memory is freed or the cap raised
  std::atomic<std::uint64_t> device_records_held{0};     // device records in memory, all threads
  std::atomic<std::uint64_t> device_records_skipped{0};  // device timings not taken: too many held
  std::atomic<std::uint64_t> unattached_drops{0};  // scopes on threads whose buffer could not be made
  std::atomic<std::uint64_t> next_step{0};         // sequence number of the next next_step() call
  std::atomic<std::uint64_t> steps_lost{0};        // next_step() calls not recorded (out of memory)
  std::uint64_t unattached_floor = 0;              // under mu: reset() point
  // Declared work that never reached a scope's mark (work_mark.hpp); the drain counts the rest.
  bounded_ring<work_chunk*, 64> free_work_chunks;  // 64 chunks of marks kept for reuse
  std::atomic<std::uint64_t> work_marks_held{0};  // marks in chunks, all threads (chunks count whole)
  std::atomic<std::uint64_t> work_no_scope{0};    // add_work() with no recording scope open
  std::atomic<std::uint64_t> work_rejected{0};    // negative, NaN or infinite values
  std::atomic<std::uint64_t> work_no_memory{0};   // no room for the mark
  std::uint64_t work_no_scope_floor = 0, work_rejected_floor = 0, work_no_memory_floor = 0;  // collect_mu: reset()
  std::atomic<std::uint8_t> drain_thread{0};       // drain_thread_state (impl/drain.hpp)

  detail::clock_anchor clock_start{};
  std::string report_target;  // SCOPEPROF_REPORT
};

/// The registry is created on first use and intentionally never destroyed: scopes in static destructors
/// and the report at exit must still find it.
SCOPEPROF_API registry& the_registry();

SCOPEPROF_API void initialise() noexcept;  // runtime (impl/runtime.hpp)
/// Registers the report at exit again after something that may have initialised the CUDA runtime, whose
/// own teardown the report must run before.
SCOPEPROF_API void rearm_exit_report() noexcept;

/// Set by a backend that keeps per-thread state (the CUDA event cache): run on a thread's first scope,
/// before its begin time is read (no scope is open on the thread yet, so one-time set-up is charged to
/// no scope), and when the thread exits.
using thread_hook = void (*)() noexcept;
inline std::atomic<thread_hook> g_thread_attach_hook{nullptr};
inline std::atomic<thread_hook> g_thread_exit_hook{nullptr};

/// First scope on a thread: make its buffer. Returns nullptr if memory is short or the thread is exiting.
SCOPEPROF_API thread_buffer* attach_thread() noexcept;
/// A scope began on a thread whose buffer could not be made: counted, never recorded.
SCOPEPROF_API void note_unattached_drop() noexcept;
/// A scope ended on another thread than the one it began on: counted (and warned once), not recorded.
SCOPEPROF_API void note_cross_thread_exit() noexcept;

constexpr std::uint64_t no_record = ~std::uint64_t{0};

/// The background drain thread: started on the first chunk refill (so a program with a few scopes never
/// has one), unless SCOPEPROF_DRAIN=0. Never blocks; a failure to start is reported once.
SCOPEPROF_API void start_drain_thread() noexcept;

/// The current chunk is full: refill within the global cap and store, or count the scope as dropped.
SCOPEPROF_API std::uint64_t append_slow(thread_buffer& b, const record& rec) noexcept;

/// Store one finished scope and return its index (no_record if dropped); the caller then lowers the
/// depth (after, so a reader never sees both old).
SCOPEPROF_ALWAYS_INLINE std::uint64_t append(thread_buffer& b, const record& rec) noexcept {
  if (SCOPEPROF_LIKELY(b.records.has_room())) return b.records.push(rec);
  return append_slow(b, rec);
}

/// Declare work for the innermost scope open on `b`'s thread (work_mark.hpp): one mark, or a count of why
/// not (no scope open, bad values, no memory). Lock-free; allocates once per work_chunk_marks marks at most.
SCOPEPROF_API void push_work(thread_buffer& b, double bytes, double flops) noexcept;

/// Device records: a cap of their own (each holds two CUDA events until collect() resolves them).
constexpr std::uint64_t max_device_records = std::uint64_t{1} << 20;

/// Reserve the slot for one device record in a new chunk; nullptr when the cap is reached (the timing is
/// skipped).
SCOPEPROF_API device_record* device_slot_slow(thread_buffer& b) noexcept;
SCOPEPROF_ALWAYS_INLINE device_record* device_slot(thread_buffer& b) noexcept {
  return b.device.has_room() ? b.device.cursor : device_slot_slow(b);
}
/// Publish the slot filled after device_slot().
SCOPEPROF_ALWAYS_INLINE void device_commit(thread_buffer& b) noexcept { b.device.publish(); }

/// The name as kept: cut to max_name_bytes at a UTF-8 boundary, ending in "...".
SCOPEPROF_API std::string truncate_name(std::string_view name);
/// First entry of a static call site: register it (once; concurrent first entries agree).
SCOPEPROF_API site_info* register_site(call_site& cs) noexcept;
/// First entry of a (call site, runtime name) pair anywhere in the process.
SCOPEPROF_API site_info* register_dynamic_site(call_site& cs, std::string_view name) noexcept;

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
