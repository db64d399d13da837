// scopeprof: the backends collect() and reset() go through, in order (backend_hooks.hpp). The CUDA events
// come first: CUPTI attributes its records to host records whose device spans are then in place.
#pragma once

#include <scopeprof/backends/backend_hooks.hpp>
#include <scopeprof/backends/cuda_collect.hpp>
#include <scopeprof/backends/cupti/collect.hpp>
#include <scopeprof/backends/torch.hpp>
#include <scopeprof/config.hpp>
#include <scopeprof/detail/raw_snapshot.hpp>

#include <cstddef>

SCOPEPROF_NAMESPACE_BEGIN
namespace detail {

/// The torch backend keeps nothing between scopes: collect() only states what it did.
inline void torch_collect(raw_snapshot& raw, const collect_context&) { raw.sources.torch = torch_evidence_text(); }
inline constexpr backend_hooks torch_backend{"LibTorch", &torch_collect, nullptr, nullptr};

inline constexpr const backend_hooks* backend_list[] = {&device_backend, &cupti_backend, &torch_backend};

/// Calls fn(hooks) for every backend, in order.
template <class Fn>
inline void for_each_backend(Fn&& fn) {
  for (const backend_hooks* b : backend_list) fn(*b);
}

}  // namespace detail
SCOPEPROF_NAMESPACE_END
