// scopeprof: the CUPTI collector's session (SCOPEPROF_WITH_CUPTI=1): loading libcupti, subscribing, the probe
// that checks records still arrive, switching on and off.
#pragma once

#include <scopeprof/backends/cupti/collector.hpp>
#include <scopeprof/backends/cupti/buffers.hpp>
#if SCOPEPROF_WITH_CUDA
#include <scopeprof/backends/cuda_driver.hpp>
#endif
#include <scopeprof/config.hpp>
#include <scopeprof/detail/env.hpp>
#include <scopeprof/detail/log.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

SCOPEPROF_NAMESPACE_BEGIN
namespace detail {

#if SCOPEPROF_ENABLED && SCOPEPROF_WITH_CUPTI
// ---- loading ----

inline void cupti_load(cupti_collector& c) {
  std::string wanted;
  if (const char* v = std::getenv("SCOPEPROF_CUPTI_LIBRARY")) wanted = v;
  void* h = nullptr;
  if (!wanted.empty()) {
    h = ::dlopen(wanted.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) {
      const char* e = ::dlerror();
      c.load_error = "SCOPEPROF_CUPTI_LIBRARY=" + wanted + " could not be loaded: " + (e ? e : "dlopen failed");
      return;
    }
    c.library_path = wanted;
  } else {
    // A libcupti already in the process (the torch wheel's, say) first: two copies would fight.
    for (const char* name : {"libcupti.so.13", "libcupti.so", "libcupti.so.12"}) {
      h = ::dlopen(name, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
      if (h != nullptr) {
        c.library_path = std::string(name) + " (already loaded)";
        break;
      }
    }
    for (const char* name : {"libcupti.so.13", "libcupti.so"}) {
      if (h != nullptr) break;
      h = ::dlopen(name, RTLD_NOW | RTLD_LOCAL);
      if (h != nullptr) c.library_path = name;
    }
    if (h == nullptr) {
      const char* e = ::dlerror();
      c.load_error = std::string("libcupti not found (tried libcupti.so.13, libcupti.so; set SCOPEPROF_CUPTI_LIBRARY): ") +
                     (e ? e : "dlopen failed");
      return;
    }
  }
  c.library = h;
  std::string missing;
  const auto sym = [&](auto& fn, const char* name, bool required) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(::dlsym(h, name));
    if (fn == nullptr && required) missing += missing.empty() ? name : std::string(", ") + name;
  };
  cupti_api& a = c.api;
  sym(a.subscribe, "cuptiSubscribe", true);
#if SCOPEPROF_CUPTI_SUBSCRIBE_V2
  sym(a.subscribe_v2, "cuptiSubscribe_v2", false);
#endif
  sym(a.unsubscribe, "cuptiUnsubscribe", true);
  sym(a.enable, "cuptiActivityEnable", true);
  sym(a.disable, "cuptiActivityDisable", true);
  sym(a.register_callbacks, "cuptiActivityRegisterCallbacks", true);
  sym(a.next_record, "cuptiActivityGetNextRecord", true);
  sym(a.flush_all, "cuptiActivityFlushAll", true);
  sym(a.dropped_records, "cuptiActivityGetNumDroppedRecords", true);
  sym(a.push, "cuptiActivityPushExternalCorrelationId", true);
  sym(a.pop, "cuptiActivityPopExternalCorrelationId", true);
  sym(a.result_string, "cuptiGetResultString", true);
  sym(a.timestamp, "cuptiGetTimestamp", true);
  sym(a.callback_name, "cuptiGetCallbackName", false);
  if (!missing.empty()) {
    c.load_error = c.library_path + " lacks " + missing;
    return;
  }
  c.api_ready.store(true, std::memory_order_release);
}

/// steady_clock minus CUPTI's clock, from the tightest of a few bracketed reads.
inline void cupti_sync_clock(cupti_collector& c) noexcept {
  std::int64_t best_gap = INT64_MAX, offset = 0;
  for (int i = 0; i < 5; ++i) {
    const std::int64_t a = steady_now_ns();
    std::uint64_t t = 0;
    if (c.api.timestamp(&t) != CUPTI_SUCCESS) return;
    const std::int64_t b = steady_now_ns();
    if (b - a < best_gap) {
      best_gap = b - a;
      offset = a + (b - a) / 2 - static_cast<std::int64_t>(t);
    }
  }
  c.clock_offset_ns.store(offset, std::memory_order_relaxed);
}

// ---- the probe: are records still reaching us? ----

enum class probe_result { ok, no_records, no_correlation, not_run };

/// Under no lock. Runs a tagged 4-byte memset on a private stream, waits for it, flushes, and looks for
/// its memset record and its external-correlation record.
inline probe_result cupti_probe(cupti_collector& c, std::string& why) noexcept {
#if SCOPEPROF_WITH_CUDA
  std::lock_guard<std::mutex> serial(c.probe_mu);
  const cudaError_t pending = cudaPeekAtLastError();
  int device = -1;
  if (cudaGetDevice(&device) != cudaSuccess) {
    forget_our_error(pending);
    why = "no current CUDA device";
    return probe_result::not_run;
  }
  if (c.probe_device != device) {  // first probe on this device (collect() runs one thread at a time)
    if (c.probe_stream != nullptr) {
      cudaStreamDestroy(c.probe_stream);
      c.probe_stream = nullptr;
    }
    if (c.probe_buffer != nullptr) {
      cudaFree(c.probe_buffer);
      c.probe_buffer = nullptr;
    }
    c.probe_device = -1;
    cudaError_t e = cudaMalloc(&c.probe_buffer, 4);
    if (e == cudaSuccess) e = cudaStreamCreateWithFlags(&c.probe_stream, cudaStreamNonBlocking);
    if (e != cudaSuccess) {
      forget_our_error(pending);
      why = "could not set up the probe: " + cuda_error_text(e);
      return probe_result::not_run;
    }
    c.probe_device = device;
  }
  std::uint64_t id;
  std::size_t from;
  {
    std::lock_guard<std::mutex> lock(c.mu);
    id = (cupti_probe_slot << cupti_seq_bits) | (c.next_probe++ & cupti_seq_mask);
    from = c.log.entries().size();
  }
  if (c.api.push(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, id) != CUPTI_SUCCESS) {
    why = "cuptiActivityPushExternalCorrelationId failed";
    return probe_result::no_correlation;
  }
  cudaError_t e = cudaMemsetAsync(c.probe_buffer, 0, 4, c.probe_stream);
  std::uint64_t last = 0;
  c.api.pop(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, &last);
  if (e == cudaSuccess) e = cudaStreamSynchronize(c.probe_stream);
  if (e != cudaSuccess) {
    forget_our_error(pending);
    why = "probe memset failed: " + cuda_error_text(e);
    return probe_result::not_run;
  }
  c.api.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  try {
    std::lock_guard<std::mutex> lock(c.mu);
    const probe_check pc = c.log.check_probe(id, (std::min)(from, c.log.entries().size()));
    if (!pc.memset_seen) {
      why = "CUPTI stopped delivering records to scopeprof (another collector, such as a torch profiler session, "
            "took over CUPTI's activity buffers or disabled its record kinds)";
      return probe_result::no_records;
    }
    if (!pc.correlation_seen) {
      why = "CUPTI delivered no external-correlation record for the probe";
      return probe_result::no_correlation;
    }
  } catch (...) {
    why = "out of memory";
    return probe_result::not_run;
  }
  return probe_result::ok;
#else
  (void)c;
  why = "built without CUDA events (SCOPEPROF_WITH_CUDA=0): lost records cannot be detected";
  return probe_result::not_run;
#endif
}

// ---- switching on and off (cold; under c.mu except where noted) ----

inline void cupti_disable_kinds_locked(cupti_collector& c) noexcept {
  for (auto k : c.kinds) c.api.disable(k);
  c.kinds.clear();
  c.api_records = false;
}

inline void cupti_unsubscribe_locked(cupti_collector& c) noexcept {
  if (c.subscribed) c.api.unsubscribe(c.subscriber);
  c.subscribed = false;
  c.subscriber = nullptr;
}

/// Disable our kinds and unsubscribe with c.mu NOT held (CUPTI may deliver buffers, which takes c.mu,
/// while it disables kinds).
inline void cupti_release(cupti_collector& c) noexcept {
  std::vector<CUpti_ActivityKind> kinds;
  CUpti_SubscriberHandle subscriber = nullptr;
  {
    std::lock_guard<std::mutex> lock(c.mu);
    kinds.swap(c.kinds);
    c.api_records = false;
    if (c.subscribed) subscriber = c.subscriber;
    c.subscribed = false;
    c.subscriber = nullptr;
  }
  for (auto k : kinds) c.api.disable(k);
  if (subscriber != nullptr) c.api.unsubscribe(subscriber);
}

inline void cupti_set_state_locked(cupti_collector& c, cupti_state s, std::string reason) {
  c.state = s;
  c.reason = std::move(reason);
  if ((s == cupti_state::withheld || s == cupti_state::unavailable || s == cupti_state::invalid) && !c.warned) {
    c.warned = true;
    warn(std::string("CUPTI collector ") + (s == cupti_state::withheld ? "withheld: " : s == cupti_state::invalid ? "invalid: " : "unavailable: ") +
         c.reason);
  }
}

inline bool cupti_enable_kind_locked(cupti_collector& c, CUpti_ActivityKind k, std::string& why) {
  const CUptiResult r = c.api.enable(k);
  if (r != CUPTI_SUCCESS) {
    why = "cuptiActivityEnable(" + std::to_string(static_cast<int>(k)) + ") failed: " + cupti_result_text(c.api, r);
    return false;
  }
  c.kinds.push_back(k);
  return true;
}

/// Why CUPTI refused our subscription because another tool holds it. `holder`: the holder's name as
/// cuptiSubscribe_v2 gave it (empty without it).
inline std::string cupti_withheld_reason(const cupti_collector& c, CUptiResult r, std::string holder) {
  // A holder that subscribed without a name (Kineto does) is reported by CUPTI as "... <not provided>".
  if (holder.find("not provided") != std::string::npos) holder.clear();
  if (holder.empty() && g_kineto_cuda_started.load())
    holder = "a torch profiler session with CUDA activity ran in this process, and Kineto keeps CUPTI until the process ends";
  return std::string("CUPTI is held by another tool") + (holder.empty() ? std::string() : " (" + holder + ")") +
         " (cuptiSubscribe: " + cupti_result_text(c.api, r) +
         "; Nsight Systems, Nsight Compute, compute-sanitizer, cuda-gdb and torch profiler sessions hold it)";
}

/// Claim the subscriber slot: it is how CUPTI tells us another tool is collecting. On failure the state
/// says why.
inline bool cupti_subscribe_locked(cupti_collector& c) {
  CUptiResult r;
  char holder[128] = {};
#if SCOPEPROF_CUPTI_SUBSCRIBE_V2
  static_assert(sizeof holder >= CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN, "room for the holder's name");
  if (c.api.subscribe_v2 != nullptr) {
    CUpti_SubscriberParams p{};
    p.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
    p.subscriberName = "scopeprof";
    p.oldSubscriberName = holder;
    p.oldSubscriberSize = sizeof holder;
    r = c.api.subscribe_v2(&c.subscriber, &cupti_subscriber_callback, nullptr, &p);
  } else
#endif
  {
    r = c.api.subscribe(&c.subscriber, &cupti_subscriber_callback, nullptr);
  }
  if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
    holder[sizeof holder - 1] = '\0';
    cupti_set_state_locked(c, cupti_state::withheld, cupti_withheld_reason(c, r, holder));
    return false;
  }
  if (r != CUPTI_SUCCESS) {
    std::string why = "cuptiSubscribe failed: " + cupti_result_text(c.api, r);
    if (r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES) why += " (insufficient privileges)";
    else if (r == CUPTI_ERROR_UNKNOWN || r == CUPTI_ERROR_NOT_INITIALIZED) why += " (no usable CUDA driver?)";
    cupti_set_state_locked(c, cupti_state::unavailable, why);
    return false;
  }
  c.subscribed = true;
  return true;
}

/// SCOPEPROF_CUPTI_API (a switch, default on): 0 leaves the launch-call records off. Read at the collector's
/// first start, so a malformed value warns once, like the switches initialise() reads.
inline bool cupti_api_records_wanted() {
  static const bool wanted = parse_switch("SCOPEPROF_CUPTI_API", env_string("SCOPEPROF_CUPTI_API"), true);
  return wanted;
}

/// Subscribed: register the buffer callbacks and enable our record kinds. On failure nothing stays
/// enabled, the subscription is given back and the state says why.
inline bool cupti_enable_locked(cupti_collector& c) {
  // Register on every start: the buffer callbacks are process-wide, and a tool that held CUPTI since our
  // last start (a torch profiler session, say) may have put its own in place. If a second registration is
  // refused, the start-up probe finds out where the records go.
  const CUptiResult r = c.api.register_callbacks(&cupti_buffer_requested, &cupti_buffer_completed);
  if (r != CUPTI_SUCCESS && !c.callbacks_registered) {
    cupti_unsubscribe_locked(c);
    cupti_set_state_locked(c, cupti_state::unavailable, "cuptiActivityRegisterCallbacks failed: " + cupti_result_text(c.api, r));
    return false;
  }
  c.callbacks_registered = true;
  std::string why;
  for (auto k : {CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
                 CUPTI_ACTIVITY_KIND_MEMSET})
    if (!cupti_enable_kind_locked(c, k, why)) {
      cupti_disable_kinds_locked(c);
      cupti_unsubscribe_locked(c);
      if (why.find("INSUFFICIENT_PRIVILEGES") != std::string::npos) why += " (insufficient privileges)";
      cupti_set_state_locked(c, cupti_state::unavailable, why);
      return false;
    }
  // The API calls that launched each kernel, copy and memset (the trace's cuda_runtime and cuda_driver
  // events, joined to the work by correlation id; HTA's launch statistics and critical path read them).
  // SCOPEPROF_CUPTI_API=0 leaves them off (they cost CUPTI time per launch): the trace then draws launches
  // from the scope, and they are switched on only if CUPTI needs them to correlate (cupti_check_start).
  c.api_records = false;
  if (cupti_api_records_wanted()) {
    std::string why_api;
    c.api_records = cupti_enable_kind_locked(c, CUPTI_ACTIVITY_KIND_RUNTIME, why_api);
    if (c.api_records) cupti_enable_kind_locked(c, CUPTI_ACTIVITY_KIND_DRIVER, why_api);
  }
  return true;
}

/// Active, `lock` (on c.mu) released: check the path end to end once. If CUPTI delivers the memset but no
/// external correlation for it and the API records are off, it may want them to correlate: switch them on
/// and look again.
/// On failure CUPTI is given back and the state says why (`lock` is then held again).
inline bool cupti_check_start(cupti_collector& c, std::unique_lock<std::mutex>& lock) {
  std::string why;
  probe_result p = cupti_probe(c, why);
  if (p == probe_result::no_correlation && !c.api_records) {  // some CUPTI versions correlate only with them
    lock.lock();
    std::string why_api;
    c.api_records = cupti_enable_kind_locked(c, CUPTI_ACTIVITY_KIND_RUNTIME, why_api) &&
                    cupti_enable_kind_locked(c, CUPTI_ACTIVITY_KIND_DRIVER, why_api);
    lock.unlock();
    p = cupti_probe(c, why);
  }
  if (p == probe_result::no_records || p == probe_result::no_correlation) {
    cupti_release(c);
    lock.lock();
    cupti_set_state_locked(c, cupti_state::unavailable, "start-up check failed: " + why);
    return false;
  }
  return true;
}

SCOPEPROF_NOINLINE inline void cupti_start() noexcept {
  cupti_collector& c = the_cupti();
  struct rearm_at_return {  // the start-up probe may be the process's first CUDA runtime call
    ~rearm_at_return() { rearm_exit_report(); }
  } rearm;
  try {
    std::call_once(c.load_once, [&] { cupti_load(c); });
    std::unique_lock<std::mutex> lock(c.mu);
    if (c.state == cupti_state::active) return;
    if (!c.api_ready.load(std::memory_order_acquire)) {
      cupti_set_state_locked(c, cupti_state::unavailable, c.load_error);
      return;
    }
    if (!cupti_subscribe_locked(c)) return;
    cupti_sync_clock(c);
    if (!cupti_enable_locked(c)) return;
    c.state = cupti_state::active;
    c.reason.clear();
    lock.unlock();
    if (!cupti_check_start(c, lock)) return;
    g_cupti_on.store(1, std::memory_order_release);
  } catch (...) {
    warn("CUPTI collector: could not start (out of memory)");
  }
}

/// Stop collecting and give CUPTI back: flush what is pending, disable our record kinds, unsubscribe.
SCOPEPROF_NOINLINE inline void cupti_stop() noexcept {
  cupti_collector& c = the_cupti();
  g_cupti_on.store(0, std::memory_order_release);
  if (!c.api_ready.load(std::memory_order_acquire)) return;
  try {
    {
      std::lock_guard<std::mutex> lock(c.mu);
      if (c.state != cupti_state::active) return;
    }
    std::string why;
    const probe_result p = cupti_probe(c, why);  // also flushes
    if (p == probe_result::not_run) c.api.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    cupti_release(c);
    std::lock_guard<std::mutex> lock(c.mu);
    if (p == probe_result::no_records || p == probe_result::no_correlation) cupti_set_state_locked(c, cupti_state::invalid, why);
    else if (c.state == cupti_state::active) c.state = cupti_state::released;
  } catch (...) {
  }
}

#endif

}  // namespace detail
SCOPEPROF_NAMESPACE_END
