// scopeprof: the CUPTI collector's entry points: the three calls a scope makes while the collector is on,
// and the public switch.
#pragma once

#include <scopeprof/backends/cupti.hpp>
// session.hpp before collect.hpp, which includes it only in CUPTI builds: the single header inlines each
// header where it is first included, so what session.hpp includes (detail/env.hpp, detail/activity.hpp)
// must not land inside a CUPTI-only block. session.hpp compiles to nothing without CUPTI.
#include <scopeprof/backends/cupti/session.hpp>
#include <scopeprof/backends/cupti/collect.hpp>
#include <scopeprof/config.hpp>
#include <scopeprof/detail/recorder.hpp>

#include <cstdint>
#include <memory>
#include <mutex>

SCOPEPROF_DETAIL_COLD_BEGIN
SCOPEPROF_NAMESPACE_BEGIN
namespace detail {

#if SCOPEPROF_ENABLED && SCOPEPROF_WITH_CUPTI
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
SCOPEPROF_NOINLINE SCOPEPROF_API std::uint64_t cupti_push(thread_buffer& b) noexcept {
  cupti_collector& c = the_cupti();
  if (!c.api_ready.load(std::memory_order_acquire)) return 0;
  cupti_thread* t = t_cupti;
  if (SCOPEPROF_UNLIKELY(t == nullptr) && (t = cupti_attach(b)) == nullptr) return 0;
  const std::uint64_t id = (std::uint64_t{t->slot + 1u} << cupti_seq_bits) | (t->next_seq++ & cupti_seq_mask);
  return c.api.push(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, id) == CUPTI_SUCCESS ? id : 0;
}

SCOPEPROF_NOINLINE SCOPEPROF_API void cupti_pop(std::uint64_t id) noexcept {
  cupti_thread* t = t_cupti;
  if (t == nullptr || (id >> cupti_seq_bits) != t->slot + 1u) return;  // ended on another thread: not ours to pop
  std::uint64_t last = 0;
  the_cupti().api.pop(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, &last);
}

SCOPEPROF_NOINLINE inline bool cupti_refill(cupti_thread& t) noexcept {
  cupti_pair_chunk* ch = cupti_pair_chunk::make(cupti_pair_chunk_pairs);
  if (ch == nullptr) return false;
  t.pairs.adopt(ch);
  return true;
}

/// Remember which host record the external id belongs to (after the host record got its index).
SCOPEPROF_NOINLINE SCOPEPROF_API void cupti_store(std::uint64_t id, std::uint64_t host_index) noexcept {
  cupti_thread* t = t_cupti;
  if (t == nullptr || (id >> cupti_seq_bits) != t->slot + 1u) return;
  if (SCOPEPROF_UNLIKELY(!t->pairs.has_room()) && !cupti_refill(*t)) return;  // unattributed: its kernels count as such
  t->pairs.push({id & cupti_seq_mask, host_index});
}

#endif

}  // namespace detail

/// @brief Switch the CUPTI collector on or off at run time (builds with SCOPEPROF_WITH_CUPTI=1; a no-op
/// elsewhere). On: kernels, copies and memsets are attributed to the innermost scope that launched them.
/// Off: CUPTI is released (record kinds disabled, subscriber slot given back); what was collected stays in
/// the next reports. If CUPTI is held by another tool, nothing is collected and reports say "withheld".
///
///   scopeprof::set_cupti(true);  run();  auto r = scopeprof::collect();  scopeprof::set_cupti(false);
SCOPEPROF_API void set_cupti(bool on) noexcept {
#if SCOPEPROF_ENABLED
  detail::initialise();
  if (on) detail::cupti_start();
  else detail::cupti_stop();
#else
  (void)on;
#endif
}

/// @brief True while the CUPTI collector is collecting.
SCOPEPROF_API bool cupti_enabled() noexcept { return detail::cupti_is_on(); }

SCOPEPROF_NAMESPACE_END
SCOPEPROF_DETAIL_COLD_END
