// scopeprof: LibTorch backend (SCOPEPROF_WITH_TORCH=1).
//
// Each scope opens an at::RecordFunction with RecordScope::USER_SCOPE, so the torch profiler shows it as a
// user_annotation (and, with CUDA activity, a gpu_user_annotation over the kernels it launched), but only
// while someone listens: with no RecordFunction callback registered for USER_SCOPE the scope pays one call
// to at::getStepCallbacksUnlessEmpty (a thread-local read and an atomic version check) and nothing else: no
// lock, no allocation. The RecordFunction lives inside the scope object (it can be neither copied nor moved).
//
// CUDA builds whose LibTorch has CUDA (SCOPEPROF_TORCH_CUDA=1, set by the CMake target) time a scope with no
// stream named on torch's current CUDA stream, like the work torch launches inside it.
#pragma once

#include <scopeprof/config.hpp>
#include <scopeprof/detail/recorder.hpp>
#include <scopeprof/detail/scope_hooks.hpp>

#if SCOPEPROF_ENABLED && SCOPEPROF_WITH_TORCH
#include <ATen/record_function.h>

#include <optional>
#include <utility>

// torch's current CUDA stream: needs LibTorch built with CUDA (libc10_cuda), which the header alone does not
// prove (Debian's CPU-only libtorch-dev ships c10/cuda/ headers without the library); the CMake target says.
#if SCOPEPROF_TORCH_CUDA
#include <c10/cuda/CUDAStream.h>
#endif
#endif

SCOPEPROF_NAMESPACE_BEGIN
namespace detail {

#if SCOPEPROF_ENABLED && SCOPEPROF_WITH_TORCH
/// The torch backend's scope hook (scope_hooks.hpp): outside the host time, so the RecordFunction's own
/// cost is not in it.
struct torch_hook {
  static constexpr hook_place place = hook_place::outside;

  SCOPEPROF_ALWAYS_INLINE void enter(const hook_entry& e) noexcept {
    // The listener check is the whole cost when nobody listens; the rest stays out of line.
    auto callbacks = at::getStepCallbacksUnlessEmpty(at::RecordScope::USER_SCOPE);
    if (SCOPEPROF_UNLIKELY(callbacks.has_value())) open(std::move(*callbacks), e.site);
  }

  SCOPEPROF_ALWAYS_INLINE void leave() noexcept {
    if (SCOPEPROF_UNLIKELY(record_.has_value())) close();
  }

  SCOPEPROF_ALWAYS_INLINE void store(thread_buffer&, std::uint64_t) noexcept {}

 private:
  // The name is the site's own string: site_info objects live as long as the process (the registry is
  // never destroyed), so the pointer handed to torch stays valid whatever torch keeps.
  SCOPEPROF_NOINLINE void open(at::StepCallbacks&& callbacks, const site_info& site) noexcept {
    try {
      record_.emplace(std::move(callbacks));
      if (record_->isActive()) record_->before(site.name.c_str());
    } catch (...) {
      // A throwing observer must not reach user code: the scope goes on without its torch entry.
      record_.reset();
    }
  }

  SCOPEPROF_NOINLINE void close() noexcept {
    try {
      record_->end();  // runs the end callbacks now, inside the host scope
    } catch (...) {
    }
    try {
      record_.reset();
    } catch (...) {
    }
  }

  std::optional<at::RecordFunction> record_;
};

#if SCOPEPROF_TORCH_CUDA && SCOPEPROF_WITH_CUDA
/// torch's current CUDA stream on `device` (nullptr if torch cannot say). Asked only when a scope names no
/// stream and is about to be device-timed (after sampling), with the device already known, so torch
/// need not look it up.
SCOPEPROF_NOINLINE inline cudaStream_t torch_current_stream(int device) noexcept {
  try {
    return c10::cuda::getCurrentCUDAStream(static_cast<c10::DeviceIndex>(device)).stream();
  } catch (...) {
    return nullptr;
  }
}
#endif

/// What the report's evidence line says about the torch backend in this build.
inline const char* torch_evidence_text() noexcept {
  return "RecordFunction USER_SCOPE entries while a torch profiler listens (SCOPEPROF_WITH_TORCH=1)";
}
#else
using torch_hook = no_hook<1>;
inline const char* torch_evidence_text() noexcept { return "not built (SCOPEPROF_WITH_TORCH=0)"; }
#endif

}  // namespace detail
SCOPEPROF_NAMESPACE_END
