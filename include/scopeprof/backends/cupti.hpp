// scopeprof: CUPTI collector (SCOPEPROF_WITH_CUPTI=1): every kernel, memcpy and memset a scope launched,
// attributed to the innermost scope through CUPTI external correlation (kind CUSTOM2; Kineto uses CUSTOM0
// and CUSTOM1).
//
//   scopeprof::set_cupti(true);     // or SCOPEPROF_CUPTI=1; off by default: scopeprof never touches CUPTI
//   ... scopes launching kernels ...
//   auto r = scopeprof::collect();  // device busy and kernel counts per scope, kernel summary
//   scopeprof::set_cupti(false);    // release CUPTI, so a later torch profiler or Nsight run can have it
//
// libcupti is loaded at run time (dlopen: a copy already in the process first, e.g. the torch wheel's, then
// libcupti.so.13 and libcupti.so; SCOPEPROF_CUPTI_LIBRARY=PATH overrides), so only the CUPTI headers are
// needed to build. CUPTI allows one subscriber per process: scopeprof subscribes first, and if another tool
// holds CUPTI (Nsight Systems, Nsight Compute, compute-sanitizer, a torch profiler session) it collects
// nothing and every report says "withheld" with the cause. A probe (a 4-byte memset on a private stream,
// tagged with its own external id) at the start and at every collect() checks that records still arrive;
// when they stop (another collector re-registered CUPTI's process-wide buffers) the CUPTI data is marked
// invalid instead of giving partial sums.
#pragma once

#include <scopeprof/config.hpp>
#include <scopeprof/detail/activity.hpp>
#include <scopeprof/detail/log.hpp>
#include <scopeprof/detail/recorder.hpp>
#include <scopeprof/report.hpp>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#if SCOPEPROF_ENABLED && SCOPEPROF_WITH_CUPTI
#include <scopeprof/backends/cuda_events.hpp>
#include <cupti_activity.h>
#include <cupti_callbacks.h>
#include <cupti_version.h>
#include <dlfcn.h>

#include <new>

// Records are read through the oldest layouts that carry every field used (CUDA 11.0's Kernel5, Memcpy4
// and Memset3): later versions only append fields, so these offsets hold for the records of any newer
// libcupti as well (checked against CUDA 13.0's Kernel10, Memcpy6 and Memset4).
#if CUPTI_API_VERSION < 13
#error "scopeprof's CUPTI collector needs CUPTI from CUDA 11.0 or newer; build with SCOPEPROF_WITH_CUPTI=0"
#endif
// cuptiSubscribe_v2 (it names the tool that holds CUPTI) exists in newer CUPTI only.
#if defined(CUpti_SubscriberParams_STRUCT_SIZE)
#define SCOPEPROF_CUPTI_SUBSCRIBE_V2 1
#else
#define SCOPEPROF_CUPTI_SUBSCRIBE_V2 0
#endif

#include <chrono>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <unordered_map>
#endif

SCOPEPROF_NAMESPACE_BEGIN
namespace detail {

/// Set by scopeprof::torch_profile once a torch profiler session with CUDA activity has started in this
/// process: Kineto keeps CUPTI from then on, which names the holder when the collector is withheld.
inline std::atomic<bool> g_kineto_cuda_started{false};

#if SCOPEPROF_ENABLED && SCOPEPROF_WITH_CUPTI

/// Read at every scope entry (relaxed): non-zero while the collector is on.
inline std::atomic<std::uint8_t> g_cupti_on{0};

/// One finished scope's external id (its sequence number on its thread) and its host record index.
struct cupti_pair {
  std::uint64_t seq;
  std::uint64_t host_index;
};
struct cupti_pair_chunk {
  static constexpr std::uint32_t capacity = 2048;
  std::uint64_t first = 0;
  cupti_pair pairs[capacity];
};

/// Per thread: the pairs its scopes stored (owner appends, collect() reads up to `published`).
struct cupti_thread {
  thread_buffer* owner = nullptr;
  std::uint32_t slot = 0;
  std::uint64_t next_seq = 0;  // owner only
  cupti_pair* cursor = nullptr;
  cupti_pair* limit = nullptr;
  std::atomic<std::uint64_t> published{0};
  std::mutex mu;  // chunks and floor
  std::vector<cupti_pair_chunk*> chunks;
  std::uint64_t floor = 0;  // pairs before this were discarded by reset()
};
inline thread_local cupti_thread* t_cupti = nullptr;

constexpr unsigned cupti_seq_bits = 40;
constexpr std::uint64_t cupti_seq_mask = (std::uint64_t{1} << cupti_seq_bits) - 1;
constexpr std::uint64_t cupti_probe_slot = (std::uint64_t{1} << (64 - cupti_seq_bits)) - 1;  // ids of the probe

/// The CUPTI entry points scopeprof uses, resolved with dlsym.
struct cupti_api {
  decltype(&cuptiSubscribe) subscribe = nullptr;
#if SCOPEPROF_CUPTI_SUBSCRIBE_V2
  decltype(&cuptiSubscribe_v2) subscribe_v2 = nullptr;  // optional: names the tool that holds CUPTI
#endif
  decltype(&cuptiUnsubscribe) unsubscribe = nullptr;
  decltype(&cuptiActivityEnable) enable = nullptr;
  decltype(&cuptiActivityDisable) disable = nullptr;
  decltype(&cuptiActivityRegisterCallbacks) register_callbacks = nullptr;
  decltype(&cuptiActivityGetNextRecord) next_record = nullptr;
  decltype(&cuptiActivityFlushAll) flush_all = nullptr;
  decltype(&cuptiActivityGetNumDroppedRecords) dropped_records = nullptr;
  decltype(&cuptiActivityPushExternalCorrelationId) push = nullptr;
  decltype(&cuptiActivityPopExternalCorrelationId) pop = nullptr;
  decltype(&cuptiGetResultString) result_string = nullptr;
  decltype(&cuptiGetTimestamp) timestamp = nullptr;
};

enum class cupti_state : std::uint8_t {
  never,        // never switched on: scopeprof has not touched CUPTI
  active,       // collecting
  released,     // switched off after collecting: the data collected stays valid
  withheld,     // another tool holds CUPTI
  unavailable,  // library, symbols, driver or privileges missing
  invalid,      // records were lost mid-run
};

struct cupti_collector {
  std::mutex mu;  // everything below except where noted; never held while calling into CUPTI's flush
  std::once_flag load_once;
  void* library = nullptr;
  std::string library_path;
  std::string load_error;
  cupti_api api;
  std::atomic<bool> api_ready{false};

  cupti_state state = cupti_state::never;
  std::string reason;  // for withheld / unavailable / invalid
  bool subscribed = false;
  CUpti_SubscriberHandle subscriber = nullptr;
  bool callbacks_registered = false;
  std::vector<CUpti_ActivityKind> kinds;  // enabled by us
  bool api_records = false;               // runtime/driver kinds enabled as a correlation fallback
  bool warned = false;

  activity_log log;  // records received (buffer-completed callback)
  std::atomic<std::int64_t> clock_offset_ns{0};  // steady_clock ns - CUPTI timestamp ns
  std::atomic<std::uint64_t> dropped{0};          // records CUPTI dropped (buffers full)
  std::uint64_t dropped_floor = 0;
  std::atomic<std::uint64_t> buffers_completed{0};

  std::mutex pool_mu;
  std::vector<std::uint8_t*> free_buffers;

  std::vector<std::unique_ptr<cupti_thread>> threads;  // by slot

  std::mutex probe_mu;  // one probe at a time (collect(), set_cupti() may race); taken before mu
  std::uint64_t next_probe = 0;
#if SCOPEPROF_WITH_CUDA
  int probe_device = -1;
  void* probe_buffer = nullptr;
  cudaStream_t probe_stream = nullptr;
#endif
};

/// Created on first use and never destroyed: CUPTI may deliver buffers until the process ends.
inline cupti_collector& the_cupti() {
  static cupti_collector* c = new cupti_collector();
  return *c;
}

constexpr std::size_t cupti_buffer_bytes = std::size_t{4} << 20;

inline std::string cupti_result_text(const cupti_api& api, CUptiResult r) {
  const char* s = nullptr;
  if (api.result_string != nullptr && api.result_string(r, &s) == CUPTI_SUCCESS && s != nullptr)
    return std::string(s) + " (" + std::to_string(static_cast<int>(r)) + ")";
  return "CUPTI error " + std::to_string(static_cast<int>(r));
}

// ---- callbacks (CUPTI's threads, or the thread calling cuptiActivityFlushAll) ----

inline void CUPTIAPI cupti_subscriber_callback(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {}

inline void CUPTIAPI cupti_buffer_requested(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records) {
  cupti_collector& c = the_cupti();
  std::uint8_t* b = nullptr;
  {
    std::lock_guard<std::mutex> lock(c.pool_mu);
    if (!c.free_buffers.empty()) {
      b = c.free_buffers.back();
      c.free_buffers.pop_back();
    }
  }
  if (b == nullptr) b = static_cast<std::uint8_t*>(::operator new(cupti_buffer_bytes, std::align_val_t{8}, std::nothrow));
  *buffer = b;
  *size = b != nullptr ? cupti_buffer_bytes : 0;
  *max_records = 0;
}

inline std::uint32_t memcpy_name(activity_log& log, std::uint8_t copy_kind) {
  switch (copy_kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return log.intern("[CUDA memcpy HtoD]");
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return log.intern("[CUDA memcpy DtoH]");
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return log.intern("[CUDA memcpy DtoD]");
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return log.intern("[CUDA memcpy HtoH]");
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return log.intern("[CUDA memcpy PtoP]");
    default: return log.intern("[CUDA memcpy]");
  }
}

inline void CUPTIAPI cupti_buffer_completed(CUcontext context, std::uint32_t stream, std::uint8_t* buffer, std::size_t,
                                            std::size_t valid) {
  cupti_collector& c = the_cupti();
  if (buffer == nullptr) return;
  c.buffers_completed.fetch_add(1, std::memory_order_relaxed);
  const std::int64_t offset = c.clock_offset_ns.load(std::memory_order_relaxed);
  const auto host = [offset](std::uint64_t t) { return static_cast<std::int64_t>(t) + offset; };
  try {
    std::lock_guard<std::mutex> lock(c.mu);
    CUpti_Activity* rec = nullptr;
    while (c.api.next_record(buffer, valid, &rec) == CUPTI_SUCCESS) {
      activity_entry e;
      switch (rec->kind) {
        case CUPTI_ACTIVITY_KIND_KERNEL:
        case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
          const auto* k = reinterpret_cast<const CUpti_ActivityKernel5*>(rec);
          e = {activity_kind::kernel, k->correlationId, static_cast<std::int32_t>(k->deviceId), k->streamId, k->graphId,
               host(k->start), host(k->end), c.log.intern(k->name != nullptr ? k->name : "(unnamed kernel)")};
          c.log.add(e);
          break;
        }
        case CUPTI_ACTIVITY_KIND_MEMCPY: {
          const auto* m = reinterpret_cast<const CUpti_ActivityMemcpy4*>(rec);
          e = {activity_kind::memcpy, m->correlationId, static_cast<std::int32_t>(m->deviceId), m->streamId, m->graphId,
               host(m->start), host(m->end), memcpy_name(c.log, m->copyKind)};
          c.log.add(e);
          break;
        }
        case CUPTI_ACTIVITY_KIND_MEMSET: {
          const auto* m = reinterpret_cast<const CUpti_ActivityMemset3*>(rec);
          e = {activity_kind::memset, m->correlationId, static_cast<std::int32_t>(m->deviceId), m->streamId, m->graphId,
               host(m->start), host(m->end), c.log.intern("[CUDA memset]")};
          c.log.add(e);
          break;
        }
        case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
          const auto* x = reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(rec);
          if (x->externalKind == CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2) c.log.correlate(x->correlationId, x->externalId);
          break;
        }
        default: break;  // runtime/driver API records (correlation fallback) carry nothing we report
      }
    }
  } catch (...) {
    // Out of memory while storing: count the buffer's records as lost.
    c.dropped.fetch_add(1, std::memory_order_relaxed);
  }
  std::size_t dropped = 0;
  if (c.api.dropped_records(context, stream, &dropped) == CUPTI_SUCCESS && dropped != 0)
    c.dropped.fetch_add(dropped, std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(c.pool_mu);
  try {
    c.free_buffers.push_back(buffer);
  } catch (...) {
    ::operator delete(buffer, std::align_val_t{8});
  }
}

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
    // Claim the subscriber slot first: it is how CUPTI tells us another tool is collecting.
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
      // A holder that subscribed without a name (Kineto does) is reported by CUPTI as "... <not provided>".
      std::string name = holder;
      if (name.find("not provided") != std::string::npos) name.clear();
      if (name.empty() && g_kineto_cuda_started.load())
        name = "a torch profiler session with CUDA activity ran in this process, and Kineto keeps CUPTI until the process ends";
      cupti_set_state_locked(c, cupti_state::withheld,
                             std::string("CUPTI is held by another tool") + (name.empty() ? std::string() : " (" + name + ")") +
                                 " (cuptiSubscribe: " + cupti_result_text(c.api, r) +
                                 "; Nsight Systems, Nsight Compute, compute-sanitizer, cuda-gdb and torch profiler sessions hold it)");
      return;
    }
    if (r != CUPTI_SUCCESS) {
      std::string why = "cuptiSubscribe failed: " + cupti_result_text(c.api, r);
      if (r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES) why += " (insufficient privileges)";
      else if (r == CUPTI_ERROR_UNKNOWN || r == CUPTI_ERROR_NOT_INITIALIZED) why += " (no usable CUDA driver?)";
      cupti_set_state_locked(c, cupti_state::unavailable, why);
      return;
    }
    c.subscribed = true;
    cupti_sync_clock(c);
    // Register on every start: the buffer callbacks are process-wide, and a tool that held CUPTI since our
    // last start (a torch profiler session, say) may have put its own in place. If a second registration is
    // refused, the start-up probe below finds out where the records go.
    r = c.api.register_callbacks(&cupti_buffer_requested, &cupti_buffer_completed);
    if (r != CUPTI_SUCCESS && !c.callbacks_registered) {
      cupti_unsubscribe_locked(c);
      cupti_set_state_locked(c, cupti_state::unavailable, "cuptiActivityRegisterCallbacks failed: " + cupti_result_text(c.api, r));
      return;
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
        return;
      }
    c.state = cupti_state::active;
    c.reason.clear();
    lock.unlock();
    // Check the path end to end once. If CUPTI delivers the memset but no external correlation for it,
    // it may want API records to correlate: switch those on and look again.
    probe_result p = cupti_probe(c, why);
    if (p == probe_result::no_correlation) {
      lock.lock();
      std::string why2;
      c.api_records = cupti_enable_kind_locked(c, CUPTI_ACTIVITY_KIND_RUNTIME, why2) &&
                      cupti_enable_kind_locked(c, CUPTI_ACTIVITY_KIND_DRIVER, why2);
      lock.unlock();
      p = cupti_probe(c, why);
    }
    if (p == probe_result::no_records || p == probe_result::no_correlation) {
      cupti_release(c);
      lock.lock();
      cupti_set_state_locked(c, cupti_state::unavailable, "start-up check failed: " + why);
      return;
    }
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

// ---- the hot path ----

SCOPEPROF_NOINLINE inline cupti_thread* cupti_attach(thread_buffer& b) noexcept {
  cupti_collector& c = the_cupti();
  try {
    auto t = std::make_unique<cupti_thread>();
    t->owner = &b;
    std::lock_guard<std::mutex> lock(c.mu);
    if (c.threads.size() + 1 >= cupti_probe_slot) return nullptr;
    t->slot = static_cast<std::uint32_t>(c.threads.size());
    c.threads.push_back(std::move(t));
    t_cupti = c.threads.back().get();
    return t_cupti;
  } catch (...) {
    return nullptr;
  }
}

/// Push this scope's external id; returns it, or 0 when nothing was pushed.
SCOPEPROF_NOINLINE inline std::uint64_t cupti_push(thread_buffer& b) noexcept {
  cupti_collector& c = the_cupti();
  if (!c.api_ready.load(std::memory_order_acquire)) return 0;
  cupti_thread* t = t_cupti;
  if (SCOPEPROF_UNLIKELY(t == nullptr) && (t = cupti_attach(b)) == nullptr) return 0;
  const std::uint64_t id = (std::uint64_t{t->slot + 1u} << cupti_seq_bits) | (t->next_seq++ & cupti_seq_mask);
  return c.api.push(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, id) == CUPTI_SUCCESS ? id : 0;
}

SCOPEPROF_NOINLINE inline void cupti_pop(std::uint64_t id) noexcept {
  cupti_thread* t = t_cupti;
  if (t == nullptr || (id >> cupti_seq_bits) != t->slot + 1u) return;  // ended on another thread: not ours to pop
  std::uint64_t last = 0;
  the_cupti().api.pop(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, &last);
}

SCOPEPROF_NOINLINE inline bool cupti_refill(cupti_thread& t) noexcept {
  try {
    auto* ch = new cupti_pair_chunk;
    ch->first = t.published.load(std::memory_order_relaxed);
    std::lock_guard<std::mutex> lock(t.mu);
    t.chunks.push_back(ch);
    t.cursor = ch->pairs;
    t.limit = ch->pairs + cupti_pair_chunk::capacity;
    return true;
  } catch (...) {
    return false;
  }
}

/// Remember which host record the external id belongs to (after the host record got its index).
SCOPEPROF_ALWAYS_INLINE void cupti_store(std::uint64_t id, std::uint64_t host_index) noexcept {
  cupti_thread* t = t_cupti;
  if (t == nullptr || (id >> cupti_seq_bits) != t->slot + 1u) return;
  if (SCOPEPROF_UNLIKELY(t->cursor == t->limit) && !cupti_refill(*t)) return;  // unattributed: its kernels count as such
  *t->cursor++ = {id & cupti_seq_mask, host_index};
  t->published.store(t->published.load(std::memory_order_relaxed) + 1, std::memory_order_release);
}

/// Per-scope state of the CUPTI collector (lives inside scopeprof::scope). Off: one relaxed load and a branch.
struct cupti_scope {
  std::uint64_t id = 0;  // 0: nothing pushed
  SCOPEPROF_ALWAYS_INLINE void enter(thread_buffer& b, const site_info&) noexcept {
    if (SCOPEPROF_UNLIKELY(g_cupti_on.load(std::memory_order_relaxed) != 0)) id = cupti_push(b);
  }
  SCOPEPROF_ALWAYS_INLINE void leave() noexcept {
    if (SCOPEPROF_UNLIKELY(id != 0)) cupti_pop(id);
  }
  SCOPEPROF_ALWAYS_INLINE void store(thread_buffer&, std::uint64_t host_index) noexcept {
    if (SCOPEPROF_UNLIKELY(id != 0)) cupti_store(id, host_index);
  }
};

// ---- collect() and reset() ----

inline std::string cupti_evidence_locked(const cupti_collector& c, bool& valid, std::uint64_t kernels,
                                         std::uint64_t copies, std::uint64_t unattributed) {
  valid = false;
  switch (c.state) {
    case cupti_state::never:
      return "off (scopeprof::set_cupti(true) or SCOPEPROF_CUPTI=1 collects kernels per scope)";
    case cupti_state::withheld: return "withheld: " + c.reason;
    case cupti_state::unavailable: return "unavailable: " + c.reason;
    case cupti_state::invalid: return "invalid: " + c.reason + "; no CUPTI figures are reported for this run";
    default: break;
  }
  const std::uint64_t dropped = c.dropped.load(std::memory_order_relaxed) - c.dropped_floor;
  if (dropped != 0)
    return "invalid: CUPTI dropped " + std::to_string(dropped) +
           " activity records (its buffers were full); no CUPTI figures are reported for this run";
  valid = true;
  std::string s = std::to_string(kernels) + " kernels and " + std::to_string(copies) + " copies/memsets from " +
                  c.library_path + ", attributed by external correlation (CUSTOM2)";
  if (unattributed) s += "; " + std::to_string(unattributed) + " launched outside any recorded scope";
  if (c.api_records) s += "; runtime/driver API records on (correlation fallback)";
  if (c.state == cupti_state::released) s += "; collection stopped, CUPTI released";
  return s;
}

/// collect(): flush, check, attribute. `ranges[t]` = {floor, recorded} of registry thread t, which is
/// raw.threads[t]. Called with the registry mutex held.
inline void cupti_collect(raw_snapshot& raw, const std::vector<thread_buffer*>& threads,
                          const std::vector<std::pair<std::uint64_t, std::uint64_t>>& ranges) {
  cupti_collector& c = the_cupti();
  bool active;
  {
    std::lock_guard<std::mutex> lock(c.mu);
    active = c.state == cupti_state::active;
  }
  if (active) {
    cupti_sync_clock(c);
    std::string why;
    const probe_result p = cupti_probe(c, why);  // flushes
    if (p == probe_result::not_run) c.api.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    if (p == probe_result::no_records || p == probe_result::no_correlation) {
      g_cupti_on.store(0, std::memory_order_release);
      cupti_release(c);
      std::lock_guard<std::mutex> lock(c.mu);
      cupti_set_state_locked(c, cupti_state::invalid, why);
    }
  }
  std::lock_guard<std::mutex> lock(c.mu);
  bool valid = false;
  if (c.state == cupti_state::active || c.state == cupti_state::released) {
    // host index of each (slot, seq), for the threads in this snapshot
    std::vector<std::int64_t> position_of_slot(c.threads.size(), -1);
    std::vector<std::unordered_map<std::uint64_t, std::uint64_t>> index_of(c.threads.size());
    for (std::size_t t = 0; t < threads.size(); ++t)
      for (std::size_t s = 0; s < c.threads.size(); ++s)
        if (c.threads[s]->owner == threads[t]) position_of_slot[s] = static_cast<std::int64_t>(t);
    for (std::size_t s = 0; s < c.threads.size(); ++s) {
      cupti_thread& ct = *c.threads[s];
      const std::uint64_t n = ct.published.load(std::memory_order_acquire);
      std::lock_guard<std::mutex> tl(ct.mu);
      for (const cupti_pair_chunk* ch : ct.chunks)
        for (std::uint64_t i = (std::max)(ct.floor, ch->first); i < (std::min<std::uint64_t>)(n, ch->first + cupti_pair_chunk::capacity); ++i)
          index_of[s].emplace(ch->pairs[i - ch->first].seq, ch->pairs[i - ch->first].host_index);
    }
    const attribution at = c.log.attribute(
        [&](std::uint64_t external, std::int64_t& thread, std::int64_t& record) {
          const std::uint64_t slot = external >> cupti_seq_bits;
          if (slot == cupti_probe_slot) return attribute_result::ignore;
          if (slot == 0 || slot > c.threads.size()) return attribute_result::outside;
          const std::int64_t pos = position_of_slot[slot - 1];
          const auto it = index_of[slot - 1].find(external & cupti_seq_mask);
          // No pair yet: the scope is still open; its work waits for the report that has the scope.
          if (it == index_of[slot - 1].end()) return attribute_result::ignore;
          if (pos < 0) return attribute_result::outside;
          const auto& range = ranges[static_cast<std::size_t>(pos)];
          if (it->second == no_record || it->second < range.first || it->second >= range.second) return attribute_result::outside;
          thread = pos;
          record = static_cast<std::int64_t>(it->second - range.first);
          return attribute_result::attributed;
        },
        raw.activities);
    raw.activity_names = c.log.names();
    raw.sources.cupti = cupti_evidence_locked(c, valid, at.kernels, at.copies, at.outside);
  } else {
    raw.sources.cupti = cupti_evidence_locked(c, valid, 0, 0, 0);
  }
  raw.sources.cupti_valid = valid;
  if (!valid) {
    raw.activities.clear();
    raw.activity_names.clear();
  }
}

/// reset(): forget the records of finished scopes (kernels of scopes still open are kept).
inline void cupti_reset() noexcept {
  cupti_collector& c = the_cupti();
  try {
    std::lock_guard<std::mutex> lock(c.mu);
    std::vector<std::unordered_map<std::uint64_t, std::uint64_t>> finished(c.threads.size());
    for (std::size_t s = 0; s < c.threads.size(); ++s) {
      cupti_thread& ct = *c.threads[s];
      const std::uint64_t n = ct.published.load(std::memory_order_acquire);
      std::lock_guard<std::mutex> tl(ct.mu);
      for (const cupti_pair_chunk* ch : ct.chunks)
        for (std::uint64_t i = (std::max)(ct.floor, ch->first); i < (std::min<std::uint64_t>)(n, ch->first + cupti_pair_chunk::capacity); ++i)
          finished[s].emplace(ch->pairs[i - ch->first].seq, 0);
      ct.floor = n;
      std::size_t k = 0;
      while (k + 1 < ct.chunks.size() && ct.chunks[k]->first + cupti_pair_chunk::capacity <= n) ++k;
      for (std::size_t i = 0; i < k; ++i) delete ct.chunks[i];
      ct.chunks.erase(ct.chunks.begin(), ct.chunks.begin() + static_cast<std::ptrdiff_t>(k));
    }
    c.log.discard_if([&](std::uint64_t external) {
      const std::uint64_t slot = external >> cupti_seq_bits;
      if (slot == 0 || slot > finished.size()) return true;
      return finished[slot - 1].count(external & cupti_seq_mask) != 0;
    });
    c.dropped_floor = c.dropped.load(std::memory_order_relaxed);
    if (c.state == cupti_state::invalid) {  // a fresh start may be tried again with set_cupti(true)
      c.state = cupti_state::released;
      c.warned = false;
    }
  } catch (...) {
  }
}

inline bool cupti_is_on() noexcept { return g_cupti_on.load(std::memory_order_acquire) != 0; }

/// reset() releases the buffers of threads that exited (`gone`, sorted by address): their pairs go, and
/// their slots can no longer be matched to a buffer (a new thread's buffer may get the same address).
inline void cupti_forget_threads(const std::vector<thread_buffer*>& gone) noexcept {
  cupti_collector& c = the_cupti();
  std::lock_guard<std::mutex> lock(c.mu);
  for (auto& t : c.threads) {
    if (t->owner == nullptr ||
        !std::binary_search(gone.begin(), gone.end(), t->owner, std::less<const thread_buffer*>()))
      continue;
    std::lock_guard<std::mutex> tl(t->mu);
    t->owner = nullptr;
    for (cupti_pair_chunk* ch : t->chunks) delete ch;
    t->chunks.clear();
    t->floor = t->published.load(std::memory_order_acquire);
  }
}

#else  // !SCOPEPROF_WITH_CUPTI

inline void cupti_start() noexcept {}
inline void cupti_stop() noexcept {}
inline bool cupti_is_on() noexcept { return false; }
inline void cupti_forget_threads(const std::vector<thread_buffer*>&) noexcept {}
inline void cupti_reset() noexcept {}
inline void cupti_collect(raw_snapshot&, const std::vector<thread_buffer*>&,
                          const std::vector<std::pair<std::uint64_t, std::uint64_t>>&) {}

#endif

}  // namespace detail

/// @brief Switch the CUPTI collector on or off at run time (builds with SCOPEPROF_WITH_CUPTI=1; a no-op
/// elsewhere). On: kernels, copies and memsets are attributed to the innermost scope that launched them.
/// Off: CUPTI is released (record kinds disabled, subscriber slot given back); what was collected stays in
/// the next reports. If CUPTI is held by another tool, nothing is collected and reports say "withheld".
///
///   scopeprof::set_cupti(true);  run();  auto r = scopeprof::collect();  scopeprof::set_cupti(false);
inline void set_cupti(bool on) noexcept {
#if SCOPEPROF_ENABLED
  detail::initialise();
  if (on) detail::cupti_start();
  else detail::cupti_stop();
#else
  (void)on;
#endif
}

/// @brief True while the CUPTI collector is collecting.
inline bool cupti_enabled() noexcept { return detail::cupti_is_on(); }

SCOPEPROF_NAMESPACE_END
