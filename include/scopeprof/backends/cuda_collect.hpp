// scopeprof: the CUDA-event backend's work outside the scopes (backend_hooks.hpp): collect() resolves the
// event pairs of the threads in the snapshot and attaches each span to its host record; reset() puts the
// discarded pairs aside (their events may still be on the GPU) and frees their chunks.
#pragma once

#include <scopeprof/backends/backend_hooks.hpp>
#include <scopeprof/backends/cuda_resolve.hpp>
#include <scopeprof/config.hpp>
#include <scopeprof/detail/raw_snapshot.hpp>
#include <scopeprof/detail/recorder.hpp>
#include <scopeprof/detail/snapshot.hpp>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

SCOPEPROF_NAMESPACE_BEGIN
namespace detail {

/// Device records from `floor` up to `count`, in order.
inline void device_records_in(const std::vector<device_chunk*>& chunks, std::uint64_t floor, std::uint64_t count,
                              std::vector<device_record*>& out) {
  chunked_log<device_record>::for_each(chunks, floor, count, [&](std::uint64_t, device_record& d) { out.push_back(&d); });
}

/// Put each device record's outcome on the host record it belongs to (records of scopes outside the
/// snapshot's range, or not in the timeline, are skipped).
inline void attach_device_records(const thread_view& t, const std::vector<device_record*>& device, raw_thread& out) {
  const std::uint64_t from = t.recorded_floor, to = t.counters.recorded;
  for (const device_record* d : device) {
    if (d->host_index == no_record || d->host_index < from || d->host_index >= to) continue;
    const std::int64_t pos = out.position_of(d->host_index);
    if (pos < 0) continue;
    raw_instance& x = out.records[static_cast<std::size_t>(pos)];
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
}

/// collect(): resolve what is pending (in bulk, one bounded wait per stream), then attach.
inline void device_collect(raw_snapshot& raw, const collect_context& ctx) {
  std::vector<std::vector<device_record*>> device(ctx.view.threads.size());
  std::vector<device_record*> all;
  for (std::size_t t = 0; t < ctx.view.threads.size(); ++t) {
    const thread_view& tv = ctx.view.threads[t];
    device_records_in(tv.device_chunks, tv.device_floor, tv.device_count, device[t]);
    all.insert(all.end(), device[t].begin(), device[t].end());
  }
  resolve_device_records(all);
  for (std::size_t t = 0; t < ctx.view.threads.size(); ++t) attach_device_records(ctx.view.threads[t], device[t], raw.threads[t]);
#if SCOPEPROF_WITH_CUDA
  raw.sources.device = device_evidence(raw.sources.device_valid, ctx.conv.ns_per_tick);
#endif
}

/// reset(): the device records each thread has published are discarded; the chunks that hold only those
/// go (all of an exited thread's).
inline void device_reset(const std::vector<reset_thread>& threads) noexcept {
  registry& r = the_registry();
  for (const auto& [b, exited] : threads) {
    try {
      const std::uint64_t count = b->device.published.load(std::memory_order_acquire);
      std::vector<device_record*> discarded;
      b->device.for_each(b->device.floor, count, [&](std::uint64_t, device_record& d) { discarded.push_back(&d); });
      retire_device_records(discarded);
      b->device.discard_below(count, exited, [&](device_chunk* ch) {
        r.device_records_held.fetch_sub(ch->capacity, std::memory_order_relaxed);
        device_chunk::destroy(ch);
      });
    } catch (...) {
      // Out of memory listing the records: this thread's stay until the next reset().
    }
  }
}

inline constexpr backend_hooks device_backend{"CUDA events", &device_collect, &device_reset, nullptr};

}  // namespace detail
SCOPEPROF_NAMESPACE_END
