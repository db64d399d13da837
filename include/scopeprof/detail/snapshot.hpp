// scopeprof: what collect() and reset() do to the recorder, without stopping any thread. The lists are
// copied under the registry mutex, each thread's chunk list under its own mutex, and everything slow
// (converting records, waiting for the GPU, building the report) runs with only collect_mu held, which no
// scope ever takes. Chunks are freed only by reset() and thread buffers only by release_exited(), both
// under collect_mu, so the copies stay valid while collect() reads them.
#pragma once

#include <scopeprof/backends/cuda_resolve.hpp>
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
/// afterwards includes it, and in_flight = entered - recorded - dropped is never negative.
struct thread_counters {
  std::uint64_t entered = 0, recorded = 0, dropped = 0;
};
inline thread_counters read_counters(const thread_buffer& b) noexcept {
  const std::uint64_t recorded = b.recorded.load(std::memory_order_acquire);
  const std::uint64_t dropped = b.dropped.load(std::memory_order_acquire);
  const std::uint64_t entered = b.entered.load(std::memory_order_acquire);
  return {entered, recorded, dropped};
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
  std::vector<const chunk*> chunks;
  std::vector<device_chunk*> device_chunks;
};

struct registry_view {
  std::vector<thread_view> threads;
  std::vector<const site_info*> sites;  // never freed; their names never change after registration
  std::uint64_t unattached = 0;
};

/// Copy the lists (registry mutex held only for the copy) and each thread's chunk list (its own mutex).
/// Counters are read before the chunk list: a chunk is added before any record in it is published.
inline registry_view view_registry(registry& r) {
  registry_view v;
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
    t.counters = read_counters(b);
    t.device_count = b.device_recorded.load(std::memory_order_acquire);
    std::lock_guard<std::mutex> lock(b.mu);
    t.name = b.name;
    t.recorded_floor = b.recorded_floor;
    t.dropped_floor = b.dropped_floor;
    t.entered_floor = b.entered_floor;
    t.device_floor = b.device_floor;
    t.chunks.assign(b.chunks.begin(), b.chunks.end());
    t.device_chunks.assign(b.device_chunks.begin(), b.device_chunks.end());
  }
  return v;
}

/// Device records from `floor` up to `count`, in order.
inline void device_records_in(const std::vector<device_chunk*>& chunks, std::uint64_t floor, std::uint64_t count,
                              std::vector<device_record*>& out) {
  for (device_chunk* ch : chunks)
    for (std::uint64_t i = (std::max)(floor, ch->first); i < (std::min<std::uint64_t>)(count, ch->first + device_chunk::capacity); ++i)
      out.push_back(&ch->records[i - ch->first]);
}

/// One thread's records since its floor, converted to nanoseconds, with their device spans attached.
inline raw_thread read_thread(const thread_view& t, const tick_converter& conv, const std::vector<device_record*>& device) {
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
  const std::uint64_t from = t.recorded_floor, to = t.counters.recorded;
  out.records.reserve(static_cast<std::size_t>(to - from));
  for (const chunk* ch : t.chunks) {
    const std::uint64_t hi = (std::min<std::uint64_t>)(to, ch->first + ch->capacity);
    for (std::uint64_t i = (std::max)(from, ch->first); i < hi; ++i) {
      const record& rec = ch->records()[i - ch->first];
      raw_instance x;
      x.site = rec.site;
      x.depth = rec.depth;
      x.host_begin_ns = conv.to_ns(rec.begin_ticks);
      x.host_end_ns = conv.to_ns(rec.end_ticks);
      out.records.push_back(x);
    }
  }
  for (const device_record* d : device) {
    if (d->host_index == no_record || d->host_index < from || d->host_index >= to) continue;
    raw_instance& x = out.records[static_cast<std::size_t>(d->host_index - from)];
    x.device_id = d->device;
    x.stream = reinterpret_cast<std::uintptr_t>(d->stream);
    switch (d->state) {
      case dev_resolved:
        x.device = device_status::ok;
        x.device_begin_ns = d->begin_ns;
        x.device_end_ns = d->end_ns;
        break;
      case dev_captured: x.device = device_status::captured; break;
      case dev_invalid: x.device = device_status::invalid; break;
      default: break;  // still running: not timed in this report
    }
  }
  return out;
}

/// reset() for one thread: raise its floors to what it has published, free the chunks that hold only
/// discarded records (all of them for a thread that exited; never the one its owner writes to), and put
/// the discarded device records' events aside. Under collect_mu.
inline void discard_thread(registry& r, thread_buffer& b, bool exited) {
  const thread_counters c = read_counters(b);
  const std::uint64_t device_count = b.device_recorded.load(std::memory_order_acquire);
  std::lock_guard<std::mutex> lock(b.mu);
  std::vector<device_record*> discarded;
  device_records_in(b.device_chunks, b.device_floor, device_count, discarded);
  retire_device_records(discarded);
  b.device_floor = device_count;
  std::size_t n = 0;
  if (exited) n = b.device_chunks.size();
  else
    while (n + 1 < b.device_chunks.size() && b.device_chunks[n]->first + device_chunk::capacity <= device_count) ++n;
  for (std::size_t i = 0; i < n; ++i) {
    delete b.device_chunks[i];
    r.device_records_held.fetch_sub(device_chunk::capacity, std::memory_order_relaxed);
  }
  b.device_chunks.erase(b.device_chunks.begin(), b.device_chunks.begin() + static_cast<std::ptrdiff_t>(n));
  b.recorded_floor = c.recorded;
  b.dropped_floor = c.dropped;
  b.entered_floor = c.recorded + c.dropped;  // scopes open now stay counted as entered
  n = 0;
  if (exited) n = b.chunks.size();
  else
    while (n + 1 < b.chunks.size() && b.chunks[n]->first + b.chunks[n]->capacity <= c.recorded) ++n;
  for (std::size_t i = 0; i < n; ++i) return_chunk(r, b.chunks[i]);
  b.chunks.erase(b.chunks.begin(), b.chunks.begin() + static_cast<std::ptrdiff_t>(n));
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
