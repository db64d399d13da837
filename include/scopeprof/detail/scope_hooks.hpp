// scopeprof: the hook interface between a scope and the backends that act at its boundaries.
//
// A backend gives a per-scope state type H, held inside scopeprof::scope, with
//
//   static constexpr hook_place place;                         // where it runs, see below
//   void enter(const hook_entry& e) noexcept;                  // scope entry
//   void leave() noexcept;                                     // scope exit, on the same thread
//   void store(thread_buffer& b, std::uint64_t host_index) noexcept;  // after the host record is stored
//                                                              // (host_index is no_record if it was dropped)
//
// hook_place::outside hooks run around the host time: they enter before the begin time is read and leave
// after the end time (NVTX, torch), so their own cost is not in the scope's host time. hook_place::inside
// hooks run within it: they enter after the begin time and leave before the end time (the CUDA event
// pair, CUPTI correlation), so a device span starts inside the host scope that launched its work. Entry
// runs the hooks in list order, exit in reverse order, store in list order. is_scope_hook<H> checks a type
// against the interface.
//
// The backends' work outside the scopes (collect(), reset()) goes through backend_hooks
// (backends/backend_hooks.hpp).
#pragma once

#include <scopeprof/config.hpp>
#include <scopeprof/detail/recorder.hpp>

#include <cstdint>
#include <type_traits>
#include <utility>

#if SCOPEPROF_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

SCOPEPROF_NAMESPACE_BEGIN

#if SCOPEPROF_WITH_CUDA
/// The stream a scope is device-timed on, when none is named.
using stream_handle = cudaStream_t;
#else
using stream_handle = void*;
#endif

namespace detail {

enum class hook_place { outside, inside };

/// What a hook sees at scope entry. `begin_ticks` is the scope's host begin time (inside hooks only; an
/// inside hook that ran one-time set-up may move it later, past the set-up).
struct hook_entry {
  thread_buffer& buffer;
  site_info& site;
  stream_handle stream;
  std::uint64_t& begin_ticks;
};

template <class H, class = void>
struct is_scope_hook : std::false_type {};
template <class H>
struct is_scope_hook<
    H, std::void_t<decltype(H::place), decltype(std::declval<H&>().enter(std::declval<const hook_entry&>())),
                   decltype(std::declval<H&>().leave()),
                   decltype(std::declval<H&>().store(std::declval<thread_buffer&>(), std::uint64_t{}))>>
    : std::bool_constant<noexcept(std::declval<H&>().enter(std::declval<const hook_entry&>())) &&
                         noexcept(std::declval<H&>().leave()) &&
                         noexcept(std::declval<H&>().store(std::declval<thread_buffer&>(), std::uint64_t{}))> {};

/// The hooks of one scope, in order. Stateless hooks take no room (empty bases).
template <class... H>
struct hook_list {
  SCOPEPROF_ALWAYS_INLINE void enter(hook_place, const hook_entry&) noexcept {}
  SCOPEPROF_ALWAYS_INLINE void leave(hook_place) noexcept {}
  SCOPEPROF_ALWAYS_INLINE void store(thread_buffer&, std::uint64_t) noexcept {}
};

template <class H, class... Rest>
struct hook_list<H, Rest...> : private H, private hook_list<Rest...> {
  static_assert(is_scope_hook<H>::value, "a scope hook needs place, and noexcept enter(), leave() and store()");
  using rest = hook_list<Rest...>;

  /// The hooks of this place, in list order.
  SCOPEPROF_ALWAYS_INLINE void enter(hook_place where, const hook_entry& e) noexcept {
    if (H::place == where) H::enter(e);
    rest::enter(where, e);
  }
  /// The hooks of this place, in reverse order.
  SCOPEPROF_ALWAYS_INLINE void leave(hook_place where) noexcept {
    rest::leave(where);
    if (H::place == where) H::leave();
  }
  SCOPEPROF_ALWAYS_INLINE void store(thread_buffer& b, std::uint64_t host_index) noexcept {
    H::store(b, host_index);
    rest::store(b, host_index);
  }
};

/// The hook of a backend not built in: it does nothing and takes no room. N keeps the stand-ins of
/// different backends apart (a hook_list cannot hold one base type twice).
template <int N>
struct no_hook {
  static constexpr hook_place place = hook_place::outside;
  SCOPEPROF_ALWAYS_INLINE void enter(const hook_entry&) noexcept {}
  SCOPEPROF_ALWAYS_INLINE void leave() noexcept {}
  SCOPEPROF_ALWAYS_INLINE void store(thread_buffer&, std::uint64_t) noexcept {}
};

}  // namespace detail
SCOPEPROF_NAMESPACE_END
