// scopeprof: the scope object and the PROF_* macros.
//
//   void step() {
//     PROF_FUNCTION();                   // named after the function
//     { PROF_SCOPE("load"); load(); }    // a literal name, registered once for this line
//     PROF_SCOPE_DYN(layer.name());      // a runtime name (std::string / std::string_view / const char*)
//     PROF_SCOPE_WORK("axpy", 3 * n * 4.0, 2.0 * n);  // with the bytes and FLOPs it declares
//   }
#pragma once

#include <scopeprof/backends/cuda_events.hpp>
#include <scopeprof/backends/cupti.hpp>
#include <scopeprof/backends/nvtx_hook.hpp>
#include <scopeprof/backends/torch.hpp>
#include <scopeprof/clock.hpp>
#include <scopeprof/config.hpp>
#include <scopeprof/detail/recorder.hpp>
#include <scopeprof/detail/scope_hooks.hpp>

#include <atomic>
#include <cstdint>
#include <string_view>

SCOPEPROF_NAMESPACE_BEGIN

namespace detail {
/// Every backend's hook, in the order they enter (detail/scope_hooks.hpp): NVTX and torch outside the host
/// time, then the CUDA event pair and CUPTI correlation inside it. Backends not built in take no room.
using scope_hook_list = hook_list<nvtx_hook, torch_hook, device_hook, cupti_hook>;
}  // namespace detail

/// @brief RAII timer for one block: records host begin/end ticks, pushes an NVTX range and, in CUDA
/// builds, records a CUDA event pair on its stream for the device span.
///
/// Use it through the macros; it is neither copyable nor movable, and must end on the thread where it began.
class scope {
 public:
#if SCOPEPROF_ENABLED
  /// Default stream (legacy, or per-thread when the program is built for it).
  SCOPEPROF_ALWAYS_INLINE explicit scope(call_site& site, stream_handle stream = nullptr) noexcept {
    const std::uint8_t state = detail::g_state.load(std::memory_order_acquire);
    if (state == detail::state_off) return;  // runtime-disabled: one load and one branch
    detail::site_info* info = site.info.load(std::memory_order_acquire);
    if (SCOPEPROF_LIKELY(state == detail::state_on && info != nullptr))
      enter(info, stream);
    else
      enter_cold(site, nullptr, stream);
  }

  SCOPEPROF_ALWAYS_INLINE scope(call_site& site, std::string_view name, stream_handle stream = nullptr) noexcept {
    const std::uint8_t state = detail::g_state.load(std::memory_order_acquire);
    if (SCOPEPROF_LIKELY(state == detail::state_on)) {
      detail::site_info* info = detail::lookup_dynamic_site(site, name);
      if (info != nullptr) enter(info, stream);
    } else if (state != detail::state_off) {
      enter_cold(site, &name, stream);
    }
  }

  SCOPEPROF_ALWAYS_INLINE ~scope() {
    if (buffer_ != nullptr) leave();
  }

  /// Declare this scope's work (PROF_SCOPE_WORK): nothing when the scope records nothing, so the work never
  /// goes to the scope around it. Call it right after entry, on the scope's thread.
  void declare_work(double bytes, double flops) noexcept {
    if (buffer_ != nullptr) detail::push_work(*buffer_, bytes, flops);
  }
#else
  explicit scope(call_site&, stream_handle = nullptr) noexcept {}
  scope(call_site&, std::string_view, stream_handle = nullptr) noexcept {}
  void declare_work(double, double) noexcept {}
#endif

  scope(const scope&) = delete;
  scope& operator=(const scope&) = delete;
  scope(scope&&) = delete;
  scope& operator=(scope&&) = delete;

 private:
#if SCOPEPROF_ENABLED
  SCOPEPROF_ALWAYS_INLINE void enter(detail::site_info* info, stream_handle stream) noexcept {
    detail::thread_buffer* b = detail::t_buffer;
    if (SCOPEPROF_UNLIKELY(b == nullptr)) {
      b = detail::attach_thread();
      if (b == nullptr) {
        detail::note_unattached_drop();
        return;
      }
    }
    b->entered.store(b->entered.load(std::memory_order_relaxed) + 1, std::memory_order_release);
    b->depth.store(b->depth.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    buffer_ = b;
    site_id_ = info->id;
    const detail::hook_entry e{*b, *info, stream, begin_ticks_};
    hooks_.enter(detail::hook_place::outside, e);
    begin_ticks_ = detail::read_ticks();
    hooks_.enter(detail::hook_place::inside, e);  // may move begin_ticks_ past one-time set-up
  }

  SCOPEPROF_NOINLINE void enter_cold(call_site& site, const std::string_view* name, stream_handle stream) noexcept {
    if (detail::g_state.load(std::memory_order_acquire) == detail::state_uninitialised) detail::initialise();
    if (detail::g_state.load(std::memory_order_relaxed) != detail::state_on) return;
    detail::site_info* info = name ? detail::lookup_dynamic_site(site, *name) : site.info.load(std::memory_order_acquire);
    if (info == nullptr && name == nullptr) info = detail::register_site(site);
#if SCOPEPROF_WITH_CUDA
    // The process's first device-timed scope looks for a GPU here, before its begin time is read, so the
    // one-time probe (loading the driver) is not charged to the scope.
    if (info != nullptr && info->device_every.load(std::memory_order_relaxed) != 0 &&
        detail::g_device_timing.load(std::memory_order_acquire) == detail::device_timing_uninitialised)
      detail::probe_devices();
#endif
    if (info != nullptr) enter(info, stream);
  }

  SCOPEPROF_ALWAYS_INLINE void leave() noexcept {
    hooks_.leave(detail::hook_place::inside);
    const std::uint64_t end_ticks = detail::read_ticks();
    hooks_.leave(detail::hook_place::outside);
    detail::thread_buffer* b = buffer_;
    if (SCOPEPROF_UNLIKELY(b != detail::t_buffer)) {
      detail::note_cross_thread_exit();
      return;
    }
    const std::uint32_t depth = b->depth.load(std::memory_order_relaxed) - 1;
    const std::uint64_t index = detail::append(
        *b, detail::record{begin_ticks_, end_ticks, site_id_, static_cast<std::uint16_t>(depth < 0xFFFFu ? depth : 0xFFFFu), 0});
    hooks_.store(*b, index);
    b->depth.store(depth, std::memory_order_relaxed);
  }

  detail::thread_buffer* buffer_ = nullptr;  // null: this scope records nothing
  std::uint64_t begin_ticks_ = 0;
  std::uint32_t site_id_ = 0;
  detail::scope_hook_list hooks_;
#endif
};

SCOPEPROF_NAMESPACE_END

