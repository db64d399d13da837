// scopeprof: LibTorch backend (SCOPEPROF_WITH_TORCH=1). Placeholder hooks; the scope calls them.
#pragma once

#include <scopeprof/config.hpp>
#include <scopeprof/detail/recorder.hpp>

namespace scopeprof {
namespace detail {

#if SCOPEPROF_ENABLED && SCOPEPROF_WITH_TORCH
/// Per-scope state of the torch backend (lives inside scopeprof::scope).
struct torch_scope {
  SCOPEPROF_ALWAYS_INLINE void enter(const site_info&) noexcept {}
  SCOPEPROF_ALWAYS_INLINE void leave() noexcept {}
};
#endif

}  // namespace detail
}  // namespace scopeprof
