// scopeprof: the hook interface of the backends' work outside the scopes. A scope reaches a backend through
// its scope hook (detail/scope_hooks.hpp); collect() and reset() reach it through one backend_hooks entry
// (backends/backend_list.hpp lists them). A backend hands its data to the report only by filling its part
// of the raw snapshot here; it never sees the report class, a builder or a writer.
#pragma once

#include <scopeprof/clock.hpp>
#include <scopeprof/config.hpp>
#include <scopeprof/detail/raw_snapshot.hpp>
#include <scopeprof/detail/recorder.hpp>
#include <scopeprof/detail/snapshot.hpp>

#include <utility>
#include <vector>

SCOPEPROF_NAMESPACE_BEGIN
namespace detail {

/// What collect() gives each backend. raw.threads[t] is view.threads[t]: its records are the timeline's
/// records of that thread recorded from view.threads[t].recorded_floor up to view.threads[t].counters.recorded,
/// in order; raw.threads[t].position_of(log index) finds one.
struct collect_context {
  const registry_view& view;
  const tick_converter& conv;
};

/// A thread reset() goes through, and whether it had exited (then everything of it goes).
using reset_thread = std::pair<thread_buffer*, bool>;

/// One backend's work outside the scopes. Every entry runs with the registry's collect_mu held (one
/// collect() or reset() at a time), never on a scope's path; a null entry is skipped.
struct backend_hooks {
  const char* name;
  /// collect(): add this backend's data and evidence line to the snapshot. May throw (collect() reports it).
  void (*collect)(raw_snapshot& raw, const collect_context& ctx);
  /// reset(): forget the data of finished scopes, and all data of threads that exited.
  void (*reset)(const std::vector<reset_thread>& threads) noexcept;
  /// reset() freed these exited threads' buffers (sorted by address): drop anything keyed by them.
  void (*forget_threads)(const std::vector<thread_buffer*>& gone) noexcept;
};

}  // namespace detail
SCOPEPROF_NAMESPACE_END
