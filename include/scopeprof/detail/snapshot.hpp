// scopeprof: what collect() and reset() do to the recorder, without stopping any thread. The lists are
// copied under the registry mutex, each thread's chunks are walked without a lock (chunked_log.hpp), and
// everything slow (converting records, waiting for the GPU, building the report) runs with only collect_mu
// held, which no scope ever takes. Chunks are freed only by reset() and thread buffers only by
// release_exited(), both under collect_mu, so the copies stay valid while collect() reads them.
#pragma once

#include <scopeprof/clock.hpp>
#include <scopeprof/config.hpp>
#include <scopeprof/detail/recorder.hpp>
#include <scopeprof/detail/chunk_pool.hpp>
#include <scopeprof/detail/raw_snapshot.hpp>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

SCOPEPROF_NAMESPACE_BEGIN
namespace detail {

/// Read one thread's counters as one consistent set, without stopping the owner. `recorded` and
/// `dropped` are read first (acquire): every scope they count was entered before, so the `entered` read
/// afterwards includes it, and in_flight = entered - recorded - dropped is never negative. `entered` is
/// also read before them, and the set is taken only when both reads agree: no scope began in between,
/// so in_flight is at most the scopes open at some instant of the read (never more than the nesting
/// depth). A preempted reader retries; after a few tries it keeps the last set, which is still >= 0.
struct thread_counters {
  std::uint64_t entered = 0, recorded = 0, dropped = 0;
};
inline thread_counters read_counters(const thread_buffer& b) noexcept {
  thread_counters c;
  for (int attempt = 0; attempt < 64; ++attempt) {
    const std::uint64_t before = b.entered.load(std::memory_order_acquire);
    c.recorded = b.records.published.load(std::memory_order_acquire);
    c.dropped = b.dropped.load(std::memory_order_acquire);
    c.entered = b.entered.load(std::memory_order_acquire);
    if (c.entered == before) break;
  }
  return c;
}

/// One thread as collect() sees it: its counters and the chunks that hold its published records.
struct thread_view {
  thread_buffer* buffer = nullptr;
  std::uint32_t ordinal = 0;
  std::uint64_t os_id = 0;
  bool exited = false;
  std::string name;
  thread_counters counters;
  std::uint64_t recorded_floor = 0, dropped_floor = 0, entered_floor = 0;
  std::uint64_t device_floor = 0, device_count = 0;
  std::vector<record_chunk*> chunks;
  std::vector<device_chunk*> device_chunks;
  std::uint64_t step_floor = 0, step_count = 0;
  std::vector<step_chunk*> step_chunks;
  std::uint64_t work_floor = 0, work_count = 0;  // declared work (work_mark.hpp)
  std::vector<work_chunk*> work_chunks;
};

struct registry_view {
  std::vector<thread_view> threads;
  std::vector<const site_info*> sites;  // never freed; their names never change after registration
  std::uint64_t unattached = 0;
  std::uint64_t ticks = 0;  // the host counter just before any count was read: every record ending later is not in the view
};

/// Copy the lists (registry mutex held only for the copy) and each thread's chunk list (its own mutex).
/// Counters are read before the chunk list: a chunk is added before any record in it is published.
inline registry_view view_registry(registry& r) {
  registry_view v;
  v.ticks = read_ticks();
  {
    std::lock_guard<std::mutex> lock(r.mu);
    v.sites.reserve(r.sites.size());
    for (const auto& s : r.sites) v.sites.push_back(s.get());
    v.threads.resize(r.threads.size());
    for (std::size_t i = 0; i < r.threads.size(); ++i) {
      thread_view& t = v.threads[i];
      t.buffer = r.threads[i];
      t.ordinal = t.buffer->ordinal;
      t.os_id = t.buffer->os_id;
      t.exited = t.buffer->exited;
    }
    v.unattached = r.unattached_drops.load(std::memory_order_relaxed) - r.unattached_floor;
  }
  for (thread_view& t : v.threads) {
    thread_buffer& b = *t.buffer;
    // The step marks first: a thread publishes a scope's record before a next_step() that follows it, so
    // every mark seen here has the records that ended before it seen too (read after). Read the other way
    // round, a pass could see a step's mark but not its last scopes, and close that step's interval line
    // without them (they would land in a later line).
    t.step_count = b.steps.published.load(std::memory_order_acquire);
    t.counters = read_counters(b);
    t.device_count = b.device.published.load(std::memory_order_acquire);
    // Work marks after the records: a mark is published before its scope's record, so every record seen
    // has its marks seen too.
    t.work_count = b.work.published.load(std::memory_order_acquire);
    {
      std::lock_guard<std::mutex> lock(b.mu);
      t.name = b.name;
    }
    t.recorded_floor = b.recorded_floor;
    t.dropped_floor = b.dropped_floor;
    t.entered_floor = b.entered_floor;
    t.device_floor = b.device.floor;
    t.chunks = b.records.chunk_list();
    t.device_chunks = b.device.chunk_list();
    t.step_floor = b.steps.floor;
    t.step_chunks = b.steps.chunk_list();
    t.work_floor = b.work.floor;
    t.work_chunks = b.work.chunk_list();
  }
  return v;
}

/// One thread's description and counts since the last reset() (its records come from the timeline).
inline raw_thread describe_thread(const thread_view& t) {
  raw_thread out;
  out.desc.index = t.ordinal;
  out.desc.os_id = t.os_id;
  out.desc.exited = t.exited;
  out.desc.name = t.name;
  scope_counts& c = out.desc.counts;
  c.recorded = t.counters.recorded - t.recorded_floor;
  c.dropped = t.counters.dropped - t.dropped_floor;
  c.entered = t.counters.entered - t.entered_floor;
  c.in_flight = c.entered - c.recorded - c.dropped;
  return out;
}

/// One thread's step marks since its floor (thread = its position in raw_snapshot::threads).
inline void read_steps(const thread_view& t, std::uint32_t thread, const tick_converter& conv, std::vector<raw_step>& out) {
  chunked_log<step_mark>::for_each(t.step_chunks, t.step_floor, t.step_count, [&](std::uint64_t, const step_mark& m) {
    out.push_back({m.sequence, thread, conv.to_ns(m.ticks), m.open_scopes});
  });
}

/// reset() for one thread: raise its floors to the counters `c` (read, and drained, just before), free
/// the chunks that hold only discarded records (all of them for a thread that exited; never the one its
/// owner writes to). The backends discard their own logs (backend_hooks::reset). Under collect_mu.
inline void discard_thread(registry& r, thread_buffer& b, const thread_counters& c, bool exited) {
  b.recorded_floor = c.recorded;
  b.dropped_floor = c.dropped;
  b.entered_floor = c.recorded + c.dropped;  // scopes open now stay counted as entered
  b.records.discard_below(c.recorded, exited, [&](record_chunk* ch) { return_chunk(r, ch); });
  // The newest step mark stays: it begins the step under way, which the next mark completes.
  const std::uint64_t marks = b.steps.published.load(std::memory_order_acquire);
  const std::uint64_t keep_from = exited || marks == 0 ? marks : marks - 1;
  if (keep_from > b.steps.floor) b.steps.discard_below(keep_from, exited, [](step_chunk* ch) { step_chunk::destroy(ch); });
}

/// Threads that had exited when discard_thread() emptied them: out of the registry and freed, so thread
/// churn costs no memory after a reset(). `forget(sorted)` tells other per-thread state (the CUPTI
/// collector's) which buffers are gone, in one pass, sorted by address. Under collect_mu.
template <class Forget>
inline void release_exited(registry& r, const std::vector<thread_buffer*>& emptied, Forget&& forget) {
  if (emptied.empty()) return;
  std::vector<thread_buffer*> sorted(emptied);
  std::sort(sorted.begin(), sorted.end(), std::less<thread_buffer*>());
  {
    std::lock_guard<std::mutex> lock(r.mu);
    r.threads.erase(std::remove_if(r.threads.begin(), r.threads.end(),
                                   [&](thread_buffer* b) {
                                     return std::binary_search(sorted.begin(), sorted.end(), b, std::less<thread_buffer*>());
                                   }),
                    r.threads.end());
  }
  forget(static_cast<const std::vector<thread_buffer*>&>(sorted));
  for (thread_buffer* b : emptied) delete b;  // its chunks went back in discard_thread()
}

}  // namespace detail
SCOPEPROF_NAMESPACE_END
