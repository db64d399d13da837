// scopeprof: turning recorded CUDA event pairs into device spans on the host timeline (SCOPEPROF_WITH_CUDA=1),
// for the drain (detail/device_fold.hpp): in the background by queries only, and for collect() after one
// bounded wait per stream for its newest event. cudaEventElapsedTime gives each pair's span and its begin
// against a reference event whose host time is known; a fresh reference is taken at least every
// reference_period, so the float offset from it stays short (its step under 8 ns) however long the run.
// Where no timeline can keep the scopes (SCOPEPROF_TRACE=off, or the record cap reached), the span alone
// is asked for: one elapsed-time call per scope instead of two.
// Resolved events go back to the pool; reference events no record needs any more are destroyed.
#pragma once

#include <scopeprof/backends/cuda_device.hpp>
#include <scopeprof/backends/cuda_driver.hpp>
#include <scopeprof/config.hpp>
#include <scopeprof/detail/device_fold.hpp>
#include <scopeprof/detail/recorder.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <thread>
#include <utility>
#include <vector>

SCOPEPROF_NAMESPACE_BEGIN
namespace detail {

#if SCOPEPROF_WITH_CUDA

/// The reference a record is placed against: its own generation while that reference exists, else the
/// newest (cudaEventElapsedTime is signed, so a reference recorded after the begin event serves as well).
/// A captured scope's events are recorded again by every replay: the newest reference is the nearest.
inline const reference_event* reference_for(const device_context& ctx, const device_record& r) noexcept {
  if (ctx.references.empty()) return nullptr;
  if (r.capture_id == 0)
    for (const auto& ref : ctx.references)
      if (ref.generation == r.reference) return &ref;
  return &ctx.references.back();
}

/// Wait, at most wait_ms per (device, stream), for the newest pending event: once it is done, the stream's
/// earlier events are too.
inline void wait_for_streams(device_registry& d, const std::vector<device_record*>& records) noexcept {
  try {
    std::map<std::pair<int, void*>, device_record*> newest;
    for (device_record* r : records)
      if (r->capture_id == 0 && r->end_event != nullptr && r->state == dev_pending) newest[{r->device, r->stream}] = r;
    for (auto& [key, r] : newest) {
      device_context& ctx = *d.devices[static_cast<std::size_t>(key.first)];
      if (!ctx.ready.load(std::memory_order_acquire) || ctx.failed.load(std::memory_order_acquire)) continue;
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(d.wait_ms);
      cudaError_t e;
      while ((e = cudaEventQuery(static_cast<cudaEvent_t>(r->end_event))) == cudaErrorNotReady &&
             std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::microseconds(50));
      if (e != cudaSuccess && e != cudaErrorNotReady) fail_device(ctx, "cudaEventQuery", e);
    }
  } catch (...) {
  }
}

/// A new reference is taken at least this often while records are being resolved (ns).
constexpr std::int64_t reference_period_ns = 100'000'000;

/// One record: resolved (placed on the host timeline, or with `place` false its span only), still captured,
/// still running (pending: returns false), or invalid. `known_done`: a later end event of the same thread on
/// the same stream is done, so this pair is too, and needs no query.
inline bool resolve_one(device_registry& d, device_record& r, bool place, bool known_done = false) noexcept {
  device_context& ctx = *d.devices[static_cast<std::size_t>(r.device)];
  const reference_event* ref = reference_for(ctx, r);
  if (ctx.failed.load(std::memory_order_acquire) || !ctx.ready.load(std::memory_order_acquire) ||
      (place && ref == nullptr)) {
    r.state = dev_invalid;
    return true;
  }
  const auto begin = static_cast<cudaEvent_t>(r.begin_event), end = static_cast<cudaEvent_t>(r.end_event);
  if (r.capture_id != 0) {
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    unsigned long long id = 0;
    const cudaError_t ce = cudaStreamGetCaptureInfo(static_cast<cudaStream_t>(r.stream), &status, &id);
    if (ce == cudaSuccess && status != cudaStreamCaptureStatusNone && id == r.capture_id) {
      r.state = dev_captured;  // still being captured: not even a query
      return true;
    }
  }
  // Query first: cudaEventElapsedTime on unfinished work returns cudaErrorNotReady, which compute-sanitizer
  // reports as an API error of the program; a query's "not ready" is an answer. These are the runtime's
  // calls, not the driver entry points a scope's records use: cuEventElapsedTime fetched at ABI 12000 cost
  // 371-475 ns a call against the runtime's 98-113 ns on an H100, and the drain's time per scope went from
  // 434 to 3882 ns (docs/gpu-2026-12-07-c/, commit 10315b8, reverted). The end event done means
  // the begin one is too (one stream, in order); a reference is done before it is used (add_reference).
  float span_ms = 0, offset_ms = 0;
  cudaError_t e = known_done ? cudaSuccess : cudaEventQuery(end);
  if (e != cudaErrorNotReady) {  // (any other error: the elapsed time below gives its own)
    e = cudaEventElapsedTime(&span_ms, begin, end);
    if (e == cudaSuccess && place) e = cudaEventElapsedTime(&offset_ms, ref->event, begin);
  }
  if (e == cudaErrorNotReady) {
    // Not run yet: a captured graph not replayed, or work still queued behind something slow.
    if (r.capture_id == 0) return false;
    r.state = dev_captured;
    return true;
  }
  if (e == cudaErrorInvalidResourceHandle && r.capture_id != 0) {
    r.state = dev_captured;  // its events were never recorded: the graph has not been replayed yet
    return true;
  }
  if (e != cudaSuccess) {
    if (e != cudaErrorInvalidResourceHandle) fail_device(ctx, "cudaEventElapsedTime", e);
    r.state = dev_invalid;
    return true;
  }
  r.begin_ns = place ? ref->host_ns + std::llround(static_cast<double>(offset_ms) * 1e6) : 0;
  r.end_ns = r.begin_ns + std::llround(static_cast<double>(span_ms) * 1e6);
  r.state = place ? dev_resolved : dev_span_only;  // captured: the latest replay's; a later collect may see a later one
  ++ctx.scopes_timed;
  if (r.capture_id == 0) {  // captured events stay with the graph: every replay records them again
    give_back_event(begin, r.device);
    give_back_event(end, r.device);
    r.begin_event = r.end_event = nullptr;
  }
  return true;
}

/// Whether `r`'s end event is done: 1 done, 0 still running, -1 the query failed.
inline int end_done(const device_record& r) noexcept {
  const cudaError_t e = cudaEventQuery(static_cast<cudaEvent_t>(r.end_event));
  return e == cudaSuccess ? 1 : e == cudaErrorNotReady ? 0 : -1;
}

/// How many of `run` are done: one thread's pending records on one stream, in the order their end events
/// were recorded. A stream runs its work in order, so the done ones are a prefix, found by bisection: two
/// queries when all or none are done, about log2(n) otherwise, instead of one per record. -1: a query failed
/// (the caller then resolves them one by one, which reports the error).
inline std::ptrdiff_t done_prefix(const std::vector<device_record*>& run) noexcept {
  const auto n = static_cast<std::ptrdiff_t>(run.size());
  int q = end_done(*run[static_cast<std::size_t>(n - 1)]);
  if (q != 0) return q == 1 ? n : -1;
  if (n == 1) return 0;
  q = end_done(*run[0]);
  if (q != 1) return q == 0 ? 0 : -1;
  std::ptrdiff_t done = 0, running = n - 1;  // run[done] is done, run[running] is not
  while (running - done > 1) {
    const std::ptrdiff_t mid = done + (running - done) / 2;
    q = end_done(*run[static_cast<std::size_t>(mid)]);
    if (q < 0) return -1;
    (q == 1 ? done : running) = mid;
  }
  return running;
}

/// One thread's records [first, last): per (device, stream), the pending ones resolved up to the first still
/// running (done_prefix), the done ones without queries of their own; captured ones one by one.
inline void resolve_thread_run(device_registry& d, device_record* const* first, device_record* const* last, bool place) {
  struct stream_run {
    int device;
    void* stream;
    std::vector<device_record*> records;
  };
  std::vector<stream_run> streams;  // a thread uses few streams: searched in place
  for (auto it = first; it != last; ++it) {
    device_record* r = *it;
    if (r->capture_id != 0) {
      if (r->state == dev_pending || r->state == dev_captured) resolve_one(d, *r, place);
      continue;
    }
    if (r->state != dev_pending) continue;
    auto s = std::find_if(streams.begin(), streams.end(),
                          [r](const stream_run& x) { return x.device == r->device && x.stream == r->stream; });
    if (s == streams.end()) s = streams.insert(streams.end(), stream_run{r->device, r->stream, {}});
    s->records.push_back(r);
  }
  for (stream_run& s : streams) {
    const std::ptrdiff_t done = done_prefix(s.records);
    if (done < 0) {
      for (device_record* r : s.records)
        if (!resolve_one(d, *r, place)) break;
      continue;
    }
    for (std::ptrdiff_t i = 0; i < done; ++i) resolve_one(d, *s.records[static_cast<std::size_t>(i)], place, true);
  }
}

/// Resolve every pending or captured record of `all`: each thread's run ([0, thread_ends[0]), then up to
/// thread_ends[1]...) by resolve_thread_run; the records after the last run (set aside by reset(), of any
/// thread, in no known order) one query each, and none after a stream's first still running.
inline void resolve_in_order(device_registry& d, const std::vector<device_record*>& all,
                             const std::vector<std::size_t>& thread_ends, bool place) {
  std::size_t from = 0;
  for (std::size_t end : thread_ends) {
    end = (std::min)(end, all.size());
    if (end > from) resolve_thread_run(d, all.data() + from, all.data() + end, place);
    from = (std::max)(from, end);
  }
  std::vector<std::pair<int, void*>> busy;  // (device, stream) with work still running
  for (std::size_t i = from; i < all.size(); ++i) {
    device_record* r = all[i];
    if (r->state != dev_pending && r->state != dev_captured) continue;
    const std::pair<int, void*> key{r->device, r->stream};
    if (r->capture_id == 0 && std::find(busy.begin(), busy.end(), key) != busy.end()) continue;
    if (!resolve_one(d, *r, place)) busy.push_back(key);
  }
}

/// After a new reference was added: destroy the references no record can need. Kept: the newest two (the
/// older one is what scopes open across this collect began against) and those of records still pending.
inline void prune_references(device_context& ctx, const std::vector<std::pair<int, std::uint32_t>>& pending) noexcept {
  auto& refs = ctx.references;
  if (refs.size() <= 2) return;
  const std::size_t keep_from = refs.size() - 2;
  std::size_t out = 0;
  for (std::size_t i = 0; i < refs.size(); ++i) {
    const bool needed = i >= keep_from || std::binary_search(pending.begin(), pending.end(),
                                                             std::make_pair(ctx.ordinal, refs[i].generation));
    if (needed) refs[out++] = refs[i];
    else cudaEventDestroy(refs[i].event);  // (errors are cleared by the caller)
  }
  refs.resize(out);
}

/// Resolve every pending record it is given, and the records set aside (retire_device_records), without
/// waiting; with `wait` (a pass for collect(), reset() or a dump), after one bounded wait per stream. Never
/// touches an event whose capture is still open; recycles resolved events; takes a fresh reference per
/// device in use when asked to wait or when the newest is reference_period old, and destroys those no
/// pending record needs. `thread_ends` and `place`: see device_drain_hooks::resolve. Called with the
/// registry's collect_mu held (and no other lock).
inline void resolve_device_records(std::vector<device_record*>& records, const std::vector<std::size_t>& thread_ends,
                                   bool wait, bool place) noexcept {
  device_registry& d = the_devices();
  if ((records.empty() && d.retired.empty()) || d.count == 0) return;
  const cudaError_t pending = cudaPeekAtLastError();
  int saved_device = 0;
  const bool have_saved_device = cudaGetDevice(&saved_device) == cudaSuccess;
  // Relaxed capture mode for this thread: our queries must not disturb a capture running elsewhere.
  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  const bool mode_swapped = cudaThreadExchangeStreamCaptureMode(&mode) == cudaSuccess;
  try {
    std::vector<device_record*> all(records);
    for (device_record& r : d.retired) all.push_back(&r);
    if (wait) wait_for_streams(d, all);
    resolve_in_order(d, all, thread_ends, place);
    flush_event_cache(t_event_cache);
    std::vector<std::pair<int, std::uint32_t>> still_pending;  // (device, generation) of unresolved records
    for (const device_record* r : all)
      if (r->state == dev_pending) still_pending.emplace_back(r->device, r->reference);
    std::sort(still_pending.begin(), still_pending.end());
    still_pending.erase(std::unique(still_pending.begin(), still_pending.end()), still_pending.end());
    const std::int64_t now = steady_now_ns();
    for (auto& ctx : d.devices) {
      if (!ctx->ready.load(std::memory_order_acquire) || ctx->failed.load(std::memory_order_acquire)) continue;
      const bool due = wait || ctx->references.empty() || now - ctx->references.back().host_ns >= reference_period_ns;
      if (due && cudaSetDevice(ctx->ordinal) == cudaSuccess && add_reference(*ctx) == cudaSuccess)
        prune_references(*ctx, still_pending);
    }
    d.retired.erase(std::remove_if(d.retired.begin(), d.retired.end(),
                                   [](const device_record& r) { return r.state != dev_pending; }),
                    d.retired.end());
  } catch (...) {
  }
  if (mode_swapped) cudaThreadExchangeStreamCaptureMode(&mode);
  if (have_saved_device) cudaSetDevice(saved_device);
  forget_our_error(pending);
}

/// reset(): records being discarded. Resolved ones hold no events; captured ones leave theirs to the graph;
/// pending ones (their events may still be on the GPU) are kept aside until a collect() sees them done.
/// Never waits. Called with the registry's collect_mu held.
inline void retire_device_records(const std::vector<device_record*>& discarded) noexcept {
  device_registry& d = the_devices();
  for (const device_record* r : discarded) {
    if (r->state != dev_pending || r->capture_id != 0 || r->end_event == nullptr) continue;
    try {
      d.retired.push_back(*r);
      d.retired.back().host_index = no_record;
    } catch (...) {  // out of memory: give the events back unresolved (their next record replaces the old)
      give_back_event(static_cast<cudaEvent_t>(r->begin_event), r->device);
      give_back_event(static_cast<cudaEvent_t>(r->end_event), r->device);
    }
  }
  flush_event_cache(t_event_cache);
}

inline std::string format_ms(double ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f ms", ms);
  return buf;
}

/// The report header's line about device time. `ns_per_tick` converts the host ticks of set-up counted
/// inside scopes.
inline std::string device_evidence(bool& valid, double ns_per_tick, std::uint64_t unresolved) {
  device_registry& d = the_devices();
  std::lock_guard<std::mutex> lock(d.mu);
  valid = false;
  const std::uint8_t state = g_device_timing.load(std::memory_order_acquire);
  if (!d.off_reason.empty()) return d.off_reason;
  if (state == device_timing_off) return "n/a (device timing switched off: SCOPEPROF_DEVICE=0 or set_device_timing(false))";
  if (!d.probed) return "n/a (no scope has asked for device time yet)";
  std::string s = "CUDA events (span between a scope's boundaries on its stream)";
  std::string failures;
  std::uint64_t timed = 0;
  for (const auto& ctx : d.devices) {
    std::lock_guard<std::mutex> clock(ctx->mu);
    timed += ctx->scopes_timed;
    if (ctx->failed.load(std::memory_order_acquire)) failures += "; GPU " + std::to_string(ctx->ordinal) + " INVALID after " + ctx->failure;
  }
  valid = failures.empty();
  s += ", " + std::to_string(timed) + " spans resolved";
  if (unresolved)
    s += ", " + std::to_string(unresolved) + " still running on the GPU when their scopes were folded (no span)";
  const std::uint64_t skipped = d.skipped.load(std::memory_order_relaxed) + the_registry().device_records_skipped.load();
  if (skipped) s += ", " + std::to_string(skipped) + " scopes not timed (event pool or record cap)";
  const double setup_ms = static_cast<double>(d.setup_ns.load(std::memory_order_relaxed)) / 1e6;
  const double inside_ms = static_cast<double>(d.setup_in_scopes_ticks.load(std::memory_order_relaxed)) * ns_per_tick / 1e6;
  if (setup_ms > 0)
    s += "; one-time set-up " + format_ms(setup_ms) +
         (inside_ms > 0 ? " (" + format_ms(inside_ms) + " of it inside enclosing scopes, none in the scope it served)"
                        : " (outside every scope)");
  return s + failures;
}

/// The drain's way to this backend, installed when device timing starts (probe_devices).
inline constexpr device_drain_hooks cuda_drain_hooks{&resolve_device_records, &retire_device_records};

#else  // !SCOPEPROF_WITH_CUDA

inline void resolve_device_records(std::vector<device_record*>&, const std::vector<std::size_t>&, bool, bool) noexcept {}
inline void retire_device_records(const std::vector<device_record*>&) noexcept {}

#endif

}  // namespace detail
SCOPEPROF_NAMESPACE_END
