// scopeprof: the CUDA-event backend's work outside the scopes (backend_hooks.hpp). The drain resolves the
// event pairs and folds their spans (cuda_resolve.hpp through detail/device_fold.hpp); collect() adds the
// report's device line; reset() puts the pairs not folded yet aside (their events may still be on the GPU)
// and frees their chunks.
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

/// The peaks of the devices scopes have timed on, into `raw` (impl/cuda_peak.hpp).
SCOPEPROF_API void add_device_peaks(raw_snapshot& raw) noexcept;

/// collect(): the drain has folded every scope with its device outcome (detail/device_fold.hpp), and the
/// timeline's records carry theirs; what is left is the report's line about device time.
inline void device_collect(raw_snapshot& raw, const collect_context& ctx) {
#if SCOPEPROF_WITH_CUDA
  raw.sources.device = device_evidence(raw.sources.device_valid, ctx.conv.ns_per_tick, raw.device_unresolved);
  device_registry& d = the_devices();
  if (d.probed)
    for (const auto& c : d.devices)  // the devices scopes have timed on (each is prepared on its first use)
      if (c && c->ready.load(std::memory_order_acquire)) raw.process.devices.push_back(c->ordinal);
  add_device_peaks(raw);
#else
  (void)raw;
  (void)ctx;
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
