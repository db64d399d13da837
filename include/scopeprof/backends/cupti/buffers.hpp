// scopeprof: the CUPTI collector's callbacks (SCOPEPROF_WITH_CUPTI=1): buffers handed to CUPTI and the records
// decoded from the buffers it gives back.
#pragma once

#include <scopeprof/backends/cupti/collector.hpp>
#include <scopeprof/config.hpp>
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

/// The interned name of API call `cbid` if it launches work, else -1 (cached per call id). Without
/// cuptiGetCallbackName every call is kept under a numbered name; attribution keeps only those that
/// launched a recorded kernel, copy or memset.
inline std::int64_t api_launch_name(cupti_collector& c, bool driver, std::uint32_t cbid) {
  const std::uint64_t key = (std::uint64_t{driver} << 32) | cbid;
  const auto it = c.api_names.find(key);
  if (it != c.api_names.end()) return it->second;
  std::int64_t id = -1;
  const char* raw = nullptr;
  if (c.api.callback_name != nullptr &&
      c.api.callback_name(driver ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API, cbid, &raw) == CUPTI_SUCCESS &&
      raw != nullptr) {
    const std::string name = launch_call_name(raw);
    if (!name.empty()) id = c.log.intern(name);
  } else {
    id = c.log.intern(std::string(driver ? "CUDA driver call " : "CUDA runtime call ") + std::to_string(cbid));
  }
  c.api_names.emplace(key, id);
  return id;
}

inline void CUPTIAPI cupti_buffer_completed(CUcontext context, std::uint32_t stream, std::uint8_t* buffer, std::size_t,
                                            std::size_t valid) {
  cupti_collector& c = the_cupti();
  if (buffer == nullptr) return;
  c.buffers_completed.fetch_add(1, std::memory_order_relaxed);
  const std::int64_t offset = c.clock_offset_ns.load(std::memory_order_relaxed);
  const auto host = [offset](std::uint64_t t) { return static_cast<std::int64_t>(t) + offset; };
  // A forced flush (collect() while work still runs) hands over unfinished records with zero timestamps.
  const auto finished = [&c](std::uint64_t start, std::uint64_t end) {
    if (start != 0 && end != 0 && end >= start) return true;
    ++c.incomplete;
    return false;
  };
  try {
    std::lock_guard<std::mutex> lock(c.mu);
    CUpti_Activity* rec = nullptr;
    while (c.api.next_record(buffer, valid, &rec) == CUPTI_SUCCESS) {
      activity_entry e;
      switch (rec->kind) {
        case CUPTI_ACTIVITY_KIND_KERNEL:
        case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
          const auto* k = reinterpret_cast<const CUpti_ActivityKernel5*>(rec);
          if (!finished(k->start, k->end)) break;
          e = {activity_kind::kernel, k->correlationId, static_cast<std::int32_t>(k->deviceId), k->streamId, k->graphId,
               host(k->start), host(k->end), c.log.intern(k->name != nullptr ? k->name : "(unnamed kernel)")};
          c.log.add(e);
          break;
        }
        case CUPTI_ACTIVITY_KIND_MEMCPY: {
          const auto* m = reinterpret_cast<const CUpti_ActivityMemcpy4*>(rec);
          if (!finished(m->start, m->end)) break;
          e = {activity_kind::memcpy, m->correlationId, static_cast<std::int32_t>(m->deviceId), m->streamId, m->graphId,
               host(m->start), host(m->end), memcpy_name(c.log, m->copyKind)};
          c.log.add(e);
          break;
        }
        case CUPTI_ACTIVITY_KIND_MEMSET: {
          const auto* m = reinterpret_cast<const CUpti_ActivityMemset3*>(rec);
          if (!finished(m->start, m->end)) break;
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
        case CUPTI_ACTIVITY_KIND_RUNTIME:
        case CUPTI_ACTIVITY_KIND_DRIVER: {
          const auto* api = reinterpret_cast<const CUpti_ActivityAPI*>(rec);
          const bool driver = rec->kind == CUPTI_ACTIVITY_KIND_DRIVER;
          const std::int64_t name = api_launch_name(c, driver, api->cbid);
          if (name >= 0 && api->correlationId != 0 && api->end >= api->start && api->start != 0)
            c.log.add_launch(api->correlationId, {static_cast<std::uint32_t>(name), driver, api->threadId, host(api->start),
                                                  host(api->end)});
          break;
        }
        default: break;
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

#endif

}  // namespace detail
SCOPEPROF_NAMESPACE_END
