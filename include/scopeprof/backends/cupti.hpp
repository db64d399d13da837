// scopeprof: CUPTI collector (SCOPEPROF_WITH_CUPTI=1). Placeholder hooks; the scope calls them.
#pragma once

#include <scopeprof/config.hpp>
#include <scopeprof/detail/recorder.hpp>

namespace scopeprof {
namespace detail {

#if SCOPEPROF_ENABLED && SCOPEPROF_WITH_CUPTI
/// Per-scope state of the CUPTI collector (lives inside scopeprof::scope).
struct cupti_scope {
  SCOPEPROF_ALWAYS_INLINE void enter(thread_buffer&, const site_info&) noexcept {}
  SCOPEPROF_ALWAYS_INLINE void leave() noexcept {}
  SCOPEPROF_ALWAYS_INLINE void store(thread_buffer&, std::uint64_t /*host_index*/) noexcept {}
};
#endif

}  // namespace detail
}  // namespace scopeprof
