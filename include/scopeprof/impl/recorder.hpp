// scopeprof: the recorder's cold paths: the registry, a thread's first scope and its exit, chunk refills,
// call-site registration. Compiled once (SCOPEPROF_IMPLEMENTATION) or inline (header-only).
#pragma once

#include <scopeprof/config.hpp>
#include <scopeprof/detail/chunk_pool.hpp>
#include <scopeprof/detail/log.hpp>
#include <scopeprof/detail/recorder.hpp>
#include <scopeprof/detail/text.hpp>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <string_view>

#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

SCOPEPROF_DETAIL_COLD_BEGIN
SCOPEPROF_NAMESPACE_BEGIN
namespace detail {

/// The registry is created on first use and intentionally never destroyed: scopes in static destructors
/// and the report at exit must still find it.
SCOPEPROF_API registry& the_registry() {
  static registry* r = new registry();
  return *r;
}

inline std::uint64_t current_os_thread_id() noexcept {
#if defined(__linux__)
  return static_cast<std::uint64_t>(::syscall(SYS_gettid));
#else
  return 0;
#endif
}

// Set once this thread's exit guard has run: later scopes on it (in other thread_local destructors) are
// counted as unattached drops instead of writing to a buffer that reset() may free.
inline thread_local bool t_thread_exited = false;

struct thread_exit_guard {
  ~thread_exit_guard() {
    thread_buffer* b = t_buffer;
    t_thread_exited = true;
    t_buffer = nullptr;
    if (b == nullptr) return;
    b->dynamic_names.reset();
    if (thread_hook exit_hook = g_thread_exit_hook.load(std::memory_order_acquire)) exit_hook();
    registry& r = the_registry();
    std::lock_guard<std::mutex> lock(r.mu);
    b->exited = true;
  }
};

/// First scope on a thread: make its buffer. Returns nullptr if memory is short or the thread is exiting.
SCOPEPROF_NOINLINE SCOPEPROF_API thread_buffer* attach_thread() noexcept {
  if (t_thread_exited) return nullptr;
  try {
    auto owned = std::make_unique<thread_buffer>();
    thread_buffer* b = owned.get();
    b->os_id = current_os_thread_id();
    {
      registry& r = the_registry();
      std::lock_guard<std::mutex> lock(r.mu);
      r.threads.reserve(r.threads.size() + 1);
      b->ordinal = r.next_ordinal++;
      r.threads.push_back(owned.release());
    }
    t_buffer = b;
    static thread_local thread_exit_guard guard;  // its destructor marks the buffer exited
    (void)guard;
    if (thread_hook attach_hook = g_thread_attach_hook.load(std::memory_order_acquire)) attach_hook();
    return b;
  } catch (...) {
    return nullptr;
  }
}

SCOPEPROF_API void note_unattached_drop() noexcept {
  the_registry().unattached_drops.fetch_add(1, std::memory_order_relaxed);
}

inline std::atomic<std::uint64_t> g_cross_thread_exits{0};

SCOPEPROF_API void note_cross_thread_exit() noexcept {
  if (g_cross_thread_exits.fetch_add(1, std::memory_order_relaxed) == 0)
    warn("a scope ended on another thread than the one it began on (a coroutine resumed elsewhere?); "
         "it is not recorded and stays counted as in flight");
}

/// The current chunk is full (or there is none yet): get another one within the global cap.
SCOPEPROF_NOINLINE inline bool refill(thread_buffer& b) noexcept {
  registry& r = the_registry();
  if (SCOPEPROF_UNLIKELY(r.drain_thread.load(std::memory_order_relaxed) == 0)) start_drain_thread();
  const std::uint64_t epoch = r.alloc_epoch.load(std::memory_order_acquire);
  if (b.full_epoch == epoch) return false;  // still full: drop without taking a lock
  const std::uint64_t next_index = b.records.published.load(std::memory_order_relaxed);
  std::uint32_t capacity = min_chunk_records;
  while (capacity < max_chunk_records && capacity <= next_index) capacity *= 4;
  if (capacity > max_chunk_records) capacity = max_chunk_records;
  const std::uint64_t cap = r.max_records.load(std::memory_order_relaxed);
  std::uint64_t used = r.allocated_records.load(std::memory_order_relaxed);
  do {
    if (used + capacity > cap) {
      b.full_epoch = epoch;
      return false;
    }
  } while (!r.allocated_records.compare_exchange_weak(used, used + capacity, std::memory_order_relaxed));
  record_chunk* c = nullptr;
  try {
    c = take_chunk(r, capacity);
    if (c == nullptr) throw std::bad_alloc();
    b.records.adopt(c);
    return true;
  } catch (...) {
    if (c != nullptr) return_chunk(r, c);
    else r.allocated_records.fetch_sub(capacity, std::memory_order_relaxed);
    b.full_epoch = epoch;
    return false;
  }
}

SCOPEPROF_NOINLINE SCOPEPROF_API std::uint64_t append_slow(thread_buffer& b, const record& rec) noexcept {
  if (refill(b)) return b.records.push(rec);
  b.dropped.store(b.dropped.load(std::memory_order_relaxed) + 1, std::memory_order_release);
  return no_record;
}

/// Reserve the slot for one device record; nullptr when the cap is reached (the timing is skipped).
SCOPEPROF_NOINLINE SCOPEPROF_API device_record* device_slot_slow(thread_buffer& b) noexcept {
  registry& r = the_registry();
  if (r.device_records_held.fetch_add(device_chunk_records, std::memory_order_relaxed) + device_chunk_records >
      max_device_records) {
    r.device_records_held.fetch_sub(device_chunk_records, std::memory_order_relaxed);
    return nullptr;
  }
  device_chunk* c = device_chunk::make(device_chunk_records);
  if (c == nullptr) {
    r.device_records_held.fetch_sub(device_chunk_records, std::memory_order_relaxed);
    return nullptr;
  }
  b.device.adopt(c);
  return b.device.cursor;
}

SCOPEPROF_API std::string truncate_name(std::string_view name) {
  if (name.size() <= max_name_bytes) return std::string(name);
  std::string cut(utf8_prefix(name, max_name_bytes - 3));
  cut += "...";
  return cut;
}

inline site_info* make_site_locked(registry& r, std::string_view name, const call_site& cs) {
  auto info = std::make_unique<site_info>();
  info->name = truncate_name(name);
  info->file = cs.file ? cs.file : "";
  info->function = cs.function ? cs.function : "";
  info->line = cs.line;
  info->id = static_cast<std::uint32_t>(r.sites.size());
  info->colour = colour_for_name(info->name);
  info->host_only = cs.host_only;
  info->per_thread_stream = cs.per_thread_stream;
  std::uint32_t every = g_default_device_every.load(std::memory_order_relaxed);
  if (!r.named_device_every.empty()) {
    const auto named = r.named_device_every.find(info->name);
    if (named != r.named_device_every.end()) every = named->second;
  }
  info->device_every.store(cs.host_only ? 0u : every, std::memory_order_relaxed);
  nvtx_register_site(info->nvtx, info->name.c_str(), info->colour);
  r.sites.push_back(std::move(info));
  return r.sites.back().get();
}

/// First entry of a static call site: register it (once; concurrent first entries agree).
SCOPEPROF_NOINLINE SCOPEPROF_API site_info* register_site(call_site& cs) noexcept {
  try {
    registry& r = the_registry();
    std::lock_guard<std::mutex> lock(r.mu);
    site_info* info = cs.info.load(std::memory_order_acquire);
    if (info == nullptr) {
      info = make_site_locked(r, cs.name ? std::string_view(cs.name) : std::string_view("(null)"), cs);
      cs.info.store(info, std::memory_order_release);
    }
    return info;
  } catch (...) {
    return nullptr;
  }
}

SCOPEPROF_NOINLINE SCOPEPROF_API site_info* register_dynamic_site(call_site& cs, std::string_view name) noexcept {
  try {
    registry& r = the_registry();
    char addr[2 * sizeof(void*) + 4];
    std::snprintf(addr, sizeof addr, "%p", static_cast<const void*>(&cs));
    std::string key = addr;
    key += '\0';
    key.append(name.data(), name.size());
    std::lock_guard<std::mutex> lock(r.mu);
    auto it = r.dynamic_sites.find(key);
    if (it != r.dynamic_sites.end()) return it->second;
    site_info* info = make_site_locked(r, name, cs);
    r.dynamic_sites.emplace(std::move(key), info);
    return info;
  } catch (...) {
    return nullptr;
  }
}

}  // namespace detail
SCOPEPROF_NAMESPACE_END
SCOPEPROF_DETAIL_COLD_END
