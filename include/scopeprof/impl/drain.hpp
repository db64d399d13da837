// scopeprof: the background drain thread (detail/drain.hpp does the work of a pass).
//
// - Lazy: started by the first chunk refill of any thread (a program with a few scopes never has one),
//   unless SCOPEPROF_DRAIN=0, which leaves draining to collect() and reset().
// - Never keeps the process alive: it is detached and touches only objects that are never destroyed; at
//   exit it is told to stop, does not start another pass, and the pass under way is let finish.
// - fork(): a pass never straddles one (the prepare handler takes collect_mu); the child has no drain
//   thread and starts its own on its next chunk refill.
// - Never on a scope's path: scopes do not wait for it, and it takes only collect_mu (which no scope takes).
#pragma once

#include <scopeprof/config.hpp>
#include <scopeprof/detail/drain.hpp>
#include <scopeprof/detail/log.hpp>
#include <scopeprof/detail/recorder.hpp>
#include <scopeprof/detail/snapshot.hpp>
#include <scopeprof/impl/dump_signal.hpp>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <thread>

#if defined(__unix__) || defined(__APPLE__)
#include <pthread.h>
#define SCOPEPROF_HAS_ATFORK 1
#else
#define SCOPEPROF_HAS_ATFORK 0
#endif

SCOPEPROF_NAMESPACE_BEGIN
namespace detail {

/// Time between passes: short while there is much to fold, longer while scopes are few.
constexpr auto drain_period_busy = std::chrono::milliseconds(1);
constexpr auto drain_period_idle = std::chrono::milliseconds(10);
constexpr std::uint64_t drain_busy_records = 65536;

SCOPEPROF_API drain_state& the_drain() {
  static drain_state* d = new drain_state();  // never destroyed: see the top
  return *d;
}

/// One background pass; returns how many records it folded.
inline std::uint64_t background_pass(registry& r) noexcept {
  try {
    std::lock_guard<std::mutex> serial(r.collect_mu);
    if (r.drain_thread.load(std::memory_order_acquire) != drain_running) return 0;
    drain_state& d = the_drain();
    const registry_view view = view_registry(r);
    std::uint64_t waiting = 0;
    for (const thread_view& t : view.threads) {
      const auto it = d.threads.find(t.buffer);
      const std::uint64_t folded = it == d.threads.end() ? 0 : it->second.folded;
      if (t.counters.recorded > folded) waiting += t.counters.recorded - folded;
    }
    drain_pass(r, d, view, pass_kind::fold, pass_scope::background);
    ++d.background_passes;
    return waiting;
  } catch (...) {
    return 0;  // out of memory listing the threads: the next pass tries again
  }
}

inline void drain_loop() noexcept {
  registry& r = the_registry();
  auto period = drain_period_idle;
  while (r.drain_thread.load(std::memory_order_acquire) == drain_running) {
    std::this_thread::sleep_for(period);
    period = background_pass(r) >= drain_busy_records ? drain_period_busy : drain_period_idle;
    serve_dump_requests();
  }
}

/// At exit: no new pass starts, and a pass under way is given up to a second to end, so it is not querying
/// CUDA events while the CUDA runtime tears itself down (a pass holds collect_mu).
inline void stop_drain_at_exit() noexcept {
  registry& r = the_registry();
  std::uint8_t running = drain_running;
  if (!r.drain_thread.compare_exchange_strong(running, drain_off, std::memory_order_acq_rel)) return;
  for (int i = 0; i < 1000; ++i) {
    if (r.collect_mu.try_lock()) {
      r.collect_mu.unlock();
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

#if SCOPEPROF_HAS_ATFORK
inline void drain_before_fork() noexcept { the_registry().collect_mu.lock(); }
inline void drain_after_fork_parent() noexcept { the_registry().collect_mu.unlock(); }
inline void drain_after_fork_child() noexcept {
  registry& r = the_registry();
  r.collect_mu.unlock();
  std::uint8_t running = drain_running;  // the thread did not come along
  r.drain_thread.compare_exchange_strong(running, drain_none, std::memory_order_acq_rel);
}
#endif

SCOPEPROF_API void start_drain_thread() noexcept {
  registry& r = the_registry();
  std::uint8_t none = drain_none;
  if (!r.drain_thread.compare_exchange_strong(none, drain_running, std::memory_order_acq_rel)) return;
  static std::once_flag hooks;
  try {
    std::call_once(hooks, [] {
      std::atexit(&stop_drain_at_exit);
#if SCOPEPROF_HAS_ATFORK
      pthread_atfork(&drain_before_fork, &drain_after_fork_parent, &drain_after_fork_child);
#endif
    });
    std::thread(&drain_loop).detach();
  } catch (...) {
    r.drain_thread.store(drain_failed, std::memory_order_release);
    warn("the background drain thread could not be started: scopes are folded at collect() and reset() only, and "
         "past SCOPEPROF_MAX_RECORDS waiting records new ones are dropped (and counted)");
  }
}

}  // namespace detail
SCOPEPROF_NAMESPACE_END
