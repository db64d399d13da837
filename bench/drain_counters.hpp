// The drain thread's own counters, read the way collect() would (under the registry's collect_mu), for the
// benchmarks that print what the drain spent per scope. Shared by the long-run benchmarks in bench/.
#pragma once

#include <scopeprof.hpp>
#include <scopeprof/detail/drain.hpp>

#include <cstdint>
#include <mutex>

/// Passes, scopes passed over (folded, or forgotten by reset()) and time spent in passes since the process
/// began; none of them is ever reset.
struct drain_counters {
  std::uint64_t passes = 0, folded = 0, pass_ns = 0, pass_ns_max = 0;
};

inline drain_counters read_drain() {
  std::lock_guard<std::mutex> serial(scopeprof::detail::the_registry().collect_mu);
  const scopeprof::detail::drain_state& d = scopeprof::detail::the_drain();
  return {d.background_passes, d.folded_total, d.pass_ns_total, d.pass_ns_max};
}
