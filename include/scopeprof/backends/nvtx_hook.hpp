// scopeprof: the NVTX backend's scope hook (scope_hooks.hpp): a range pushed and popped outside the host
// time, so the NVTX call and any tool attached to it are not in the scope's host time. Kept apart from
// nvtx.hpp, which the recorder includes for the per-site data before the hook interface exists.
#pragma once

#include <scopeprof/backends/nvtx.hpp>
#include <scopeprof/config.hpp>
#include <scopeprof/detail/recorder.hpp>
#include <scopeprof/detail/scope_hooks.hpp>

#include <cstdint>

SCOPEPROF_NAMESPACE_BEGIN
namespace detail {

struct nvtx_hook {
  static constexpr hook_place place = hook_place::outside;
  SCOPEPROF_ALWAYS_INLINE void enter(const hook_entry& e) noexcept { nvtx_push(e.site.nvtx); }
  SCOPEPROF_ALWAYS_INLINE void leave() noexcept { nvtx_pop(); }
  SCOPEPROF_ALWAYS_INLINE void store(thread_buffer&, std::uint64_t) noexcept {}
};

}  // namespace detail
SCOPEPROF_NAMESPACE_END
