// scopeprof: the CUPTI collector's state (SCOPEPROF_WITH_CUPTI=1): the entry points loaded from libcupti,
// the per-thread (external id, host record) pairs, and the collector singleton.
#pragma once

#include <scopeprof/backends/cupti.hpp>
#include <scopeprof/config.hpp>
#include <scopeprof/detail/activity.hpp>
#include <scopeprof/detail/chunked_log.hpp>
#include <scopeprof/detail/recorder.hpp>

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

#if SCOPEPROF_ENABLED && SCOPEPROF_WITH_CUPTI
#include <scopeprof/backends/cuda_events.hpp>
#include <cupti_activity.h>
#include <cupti_callbacks.h>
#include <cupti_version.h>
#include <dlfcn.h>


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

#endif

SCOPEPROF_NAMESPACE_BEGIN
namespace detail {

#if SCOPEPROF_ENABLED && SCOPEPROF_WITH_CUPTI
/// One finished scope's external id (its sequence number on its thread) and its host record index.
struct cupti_pair {
  std::uint64_t seq;
  std::uint64_t host_index;
};
using cupti_pair_chunk = log_chunk<cupti_pair>;
constexpr std::uint32_t cupti_pair_chunk_pairs = 2048;

/// Per thread: the pairs its scopes stored (owner appends, collect() reads up to `pairs.published`).
struct cupti_thread {
  thread_buffer* owner = nullptr;
  std::uint32_t slot = 0;
  std::uint64_t next_seq = 0;  // owner only
  chunked_log<cupti_pair> pairs;  // read and discarded by collect() and reset() under the collector's mu
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
  decltype(&cuptiGetCallbackName) callback_name = nullptr;  // optional: names the launching API calls
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
  bool api_records = false;               // runtime/driver API records enabled (the launch calls)
  bool warned = false;

  activity_log log;  // records received (buffer-completed callback)
  // Per (domain << 32 | cbid): the interned name of a launch call, or -1 for calls that launch nothing.
  std::unordered_map<std::uint64_t, std::int64_t> api_names;
  std::atomic<std::int64_t> clock_offset_ns{0};  // steady_clock ns - CUPTI timestamp ns
  std::atomic<std::uint64_t> dropped{0};          // records CUPTI dropped (buffers full)
  std::uint64_t dropped_floor = 0;
  // Records a forced flush handed over before their work ended (CUPTI gives them zero timestamps): left
  // out, and counted for the evidence line. Under mu.
  std::uint64_t incomplete = 0;
  std::uint64_t incomplete_floor = 0;
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

#endif

}  // namespace detail
SCOPEPROF_NAMESPACE_END
