// scopeprof: start-up, the run-time switches, collect(), reset() and the report at exit: the runtime's
// cold code, declared in runtime.hpp.
#pragma once

#include <scopeprof/backends/backend_list.hpp>
#include <scopeprof/backends/cuda_device.hpp>
#include <scopeprof/backends/cuda_events.hpp>
#include <scopeprof/backends/cupti/session.hpp>
#include <scopeprof/clock.hpp>
#include <scopeprof/config.hpp>
#include <scopeprof/detail/drain.hpp>
#include <scopeprof/detail/env.hpp>
#include <scopeprof/detail/gzip_sink.hpp>
#include <scopeprof/detail/raw_snapshot.hpp>
#include <scopeprof/detail/sink.hpp>
#include <scopeprof/detail/log.hpp>
#include <scopeprof/detail/output_path.hpp>
#include <scopeprof/detail/process_identity.hpp>
#include <scopeprof/detail/recorder.hpp>
#include <scopeprof/detail/snapshot.hpp>
#include <scopeprof/detail/timeline.hpp>
#include <scopeprof/impl/drain.hpp>
#include <scopeprof/impl/intervals.hpp>
#include <scopeprof/report.hpp>
#include <scopeprof/runtime.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

SCOPEPROF_NAMESPACE_BEGIN
namespace detail {

inline void report_at_exit() noexcept;

/// SCOPEPROF_TRACE (the timeline) and SCOPEPROF_DRAIN (the background thread), read once at start-up.
inline void configure_drain(registry& r) {
  drain_state& d = the_drain();
  std::string why;
  const std::string trace = env_string("SCOPEPROF_TRACE");
  if (!parse_trace_policy(lower(trace), d.policy, why))
    warn("SCOPEPROF_TRACE=" + quoted(trace) + " ignored (" + why + "); the timeline keeps every scope (all)");
  d.ring.reset(d.policy.last_n);
  if (!parse_switch("SCOPEPROF_DRAIN", env_string("SCOPEPROF_DRAIN"), true))
    r.drain_thread.store(drain_off, std::memory_order_relaxed);
}

inline std::once_flag& init_flag() {
  static std::once_flag f;
  return f;
}

SCOPEPROF_API void initialise() noexcept {
  try {
    std::call_once(init_flag(), [] {
      registry& r = the_registry();
      const bool on = parse_switch("SCOPEPROF", env_string("SCOPEPROF"), true);
      g_clock_kind = parse_clock(env_string("SCOPEPROF_CLOCK"));
      r.max_records.store(parse_count("SCOPEPROF_MAX_RECORDS", env_string("SCOPEPROF_MAX_RECORDS"),
                                      r.max_records.load(std::memory_order_relaxed)),
                          std::memory_order_relaxed);
      g_default_device_every.store(
          static_cast<std::uint32_t>((std::min<std::uint64_t>)(
              parse_count("SCOPEPROF_DEVICE_SAMPLE", env_string("SCOPEPROF_DEVICE_SAMPLE"), 1), UINT32_MAX)),
          std::memory_order_relaxed);
      if (!parse_switch("SCOPEPROF_DEVICE", env_string("SCOPEPROF_DEVICE"), true))
        g_device_timing.store(device_timing_off, std::memory_order_relaxed);
#if SCOPEPROF_WITH_CUDA
      the_devices().wait_ms = parse_count("SCOPEPROF_DEVICE_WAIT_MS", env_string("SCOPEPROF_DEVICE_WAIT_MS"), 5000);
      g_calibrate_on_first_use.store(parse_switch("SCOPEPROF_CALIBRATE", env_string("SCOPEPROF_CALIBRATE"), false));
#endif
      configure_drain(r);
      const std::string dump_signal = env_string("SCOPEPROF_DUMP_SIGNAL");
      if (!dump_signal.empty()) install_dump_signal(dump_signal, env_string("SCOPEPROF_DUMP_PATH"));
      r.clock_start = read_anchor();
      nvtx_initialize();
      r.report_target = env_string("SCOPEPROF_REPORT");
      if (!r.report_target.empty()) std::atexit(&report_at_exit);
      configure_intervals(r);
      const bool cupti = parse_switch("SCOPEPROF_CUPTI", env_string("SCOPEPROF_CUPTI"), false);
#if SCOPEPROF_WITH_CUPTI
      if (cupti) cupti_start();
#else
      if (cupti) warn("SCOPEPROF_CUPTI=1: this program was built without the CUPTI collector (SCOPEPROF_WITH_CUPTI=0)");
#endif
      g_state.store(on ? state_on : state_off, std::memory_order_release);
    });
  } catch (...) {
    // call_once itself failed (out of resources): stay off rather than half-initialised.
    std::uint8_t expected = state_uninitialised;
    g_state.compare_exchange_strong(expected, state_off);
  }
}

/// Ticks to nanoseconds, calibrated over the whole run so far (at least 20 ms of it), and the header's
/// description of the host clock.
inline tick_converter calibrated_converter(const registry& r, std::string& description) {
  clock_anchor end = read_anchor();
  if (g_clock_kind != clock_kind::steady && end.ns - r.clock_start.ns < 20'000'000) {
    std::this_thread::sleep_for(std::chrono::nanoseconds(20'000'000 - (end.ns - r.clock_start.ns)));
    end = read_anchor();
  }
  const tick_converter conv = tick_converter::between(g_clock_kind, r.clock_start, end);
  char buf[160];
  if (g_clock_kind == clock_kind::steady)
    std::snprintf(buf, sizeof buf, "%s", to_string(g_clock_kind));
  else
    std::snprintf(buf, sizeof buf, "%s at %.4f GHz, calibrated against steady_clock over %.3f s", to_string(g_clock_kind),
                  1.0 / conv.ns_per_tick, static_cast<double>(end.ns - r.clock_start.ns) / 1e9);
  description = buf;
  return conv;
}

/// The timeline's and the drain's lines in the report's header.
inline void timeline_warnings(const registry& r, const drain_state& d, raw_snapshot& raw) {
  const timeline_counts& t = raw.timeline;
  if (d.fold_failed)
    raw.warnings += "  warning: " + std::to_string(d.fold_failed) +
                    " finished scopes could not be added to the tables (out of memory)\n";
  if (t.left_out == 0) return;
  if (d.policy.mode == trace_mode::all)
    raw.warnings += "  warning: the timeline stopped growing at " + std::to_string(r.max_records.load()) +
                    " scopes (SCOPEPROF_MAX_RECORDS); " + std::to_string(t.left_out) +
                    " later scopes are in the tables only\n";
  else
    raw.warnings += "  note: SCOPEPROF_TRACE=" + t.policy + ": the timeline holds " + std::to_string(t.kept) + " of " +
                    std::to_string(t.kept + t.left_out) + " scopes; the tables count them all\n";
  if (!raw.activities.empty())
    raw.warnings += "  note: host times and device spans count every scope; CUPTI figures (kernels, copies, busy "
                    "time) come from the " + std::to_string(t.kept) + " scopes in the timeline only\n";
}

/// The snapshot's sites, threads, counts and warnings, from the registry view (drained just before);
/// then every backend adds its part (device spans, CUPTI records, evidence lines).
inline void fill_snapshot(const registry& r, const registry_view& view, const tick_converter& conv, raw_snapshot& raw) {
  raw.sites.reserve(view.sites.size());
  for (const site_info* s : view.sites) raw.sites.push_back({s->name, s->file, s->function, s->line});
  for (const thread_view& tv : view.threads) {
    read_steps(tv, static_cast<std::uint32_t>(raw.threads.size()), conv, raw.steps);
    raw.threads.push_back(describe_thread(tv));
    const scope_counts& c = raw.threads.back().desc.counts;
    raw.counts.entered += c.entered;
    raw.counts.recorded += c.recorded;
    raw.counts.dropped += c.dropped;
    raw.counts.in_flight += c.in_flight;
  }
  const drain_state& d = the_drain();
  read_timeline(d, view, conv, raw);
  // The tables come from the fold (every scope since reset(), whatever the timeline kept): the report
  // needs no instance for them, so instances() can be built when first asked for.
  snapshot_fold(d, view, conv.kind == clock_kind::steady ? 1.0 : conv.ns_per_tick, raw.folded);
  const collect_context ctx{view, conv};
  for_each_backend([&](const backend_hooks& b) {
    if (b.collect != nullptr) b.collect(raw, ctx);
  });
  if (view.unattached) {
    raw.counts.entered += view.unattached;
    raw.counts.dropped += view.unattached;
    raw.warnings += "  warning: " + std::to_string(view.unattached) +
                    " scopes ran on threads without a record buffer (out of memory, or in thread exit) and were dropped\n";
  }
  raw.steps_lost = r.steps_lost.load(std::memory_order_relaxed);
  work_snapshot(r, d, view, raw);
  if (raw.counts.dropped)
    raw.warnings += "  warning: " + std::to_string(raw.counts.dropped) +
                    " finished scopes were dropped because " + std::to_string(r.max_records.load()) +
                    " records were waiting to be folded (SCOPEPROF_MAX_RECORDS; the drain did not keep up" +
                    (r.drain_thread.load() == drain_running ? "" : ", and it runs only at collect() and reset()") + ")\n";
  timeline_warnings(r, d, raw);
}

}  // namespace detail

/// @brief True when scopes are being recorded now.
SCOPEPROF_API bool enabled() noexcept {
  detail::initialise();
  return detail::g_state.load(std::memory_order_acquire) == detail::state_on;
}

/// @brief Switch recording on or off at run time (scopes already open still finish and are recorded).
SCOPEPROF_API void set_enabled(bool on) noexcept {
#if SCOPEPROF_ENABLED
  detail::initialise();
  detail::g_state.store(on ? detail::state_on : detail::state_off, std::memory_order_release);
#else
  (void)on;
#endif
}

/// @brief Cap on records held in memory across all threads; past it, scopes are counted as dropped.
SCOPEPROF_API void set_max_records(std::uint64_t n) noexcept {
  detail::initialise();
  detail::registry& r = detail::the_registry();
  r.max_records.store(n, std::memory_order_relaxed);
  r.alloc_epoch.fetch_add(1, std::memory_order_acq_rel);  // threads that found the buffer full may try again
}

SCOPEPROF_API bool set_trace_policy(std::string_view policy) noexcept {
  using namespace detail;
  initialise();
  try {
    trace_policy p;
    std::string why;
    const std::string value(policy);
    if (!parse_trace_policy(lower(value), p, why)) {
      warn("set_trace_policy(" + quoted(value) + ") ignored: " + why);
      return false;
    }
    registry& r = the_registry();
    std::lock_guard<std::mutex> serial(r.collect_mu);
    drain_state& d = the_drain();
    // What ended so far goes by the previous setting (scopes whose device work still runs: the new one).
    drain_pass(r, d, view_registry(r), pass_kind::fold, pass_scope::background);
    for (auto& [buffer, td] : d.threads) {
      d.left_out += td.kept.size();
      td.kept.clear();
      td.step_cursor = 0;  // steps:A-B looks at the marks made so far again
    }
    d.left_out += d.ring.size();
    d.kept = 0;
    d.step_begin = d.step_end = 0;
    d.policy = p;
    d.ring.reset(p.last_n);
    return true;
  } catch (...) {
    return false;
  }
}

/// @brief Device-time every Nth entry of every call site (0: host time only, 1: every entry).
/// Applies to sites already seen and to new ones, and replaces every per-name setting. CUDA builds;
/// harmless elsewhere.
SCOPEPROF_API void set_device_sampling(std::uint32_t every_n) noexcept {
  detail::initialise();
  detail::g_default_device_every.store(every_n, std::memory_order_relaxed);
  detail::registry& r = detail::the_registry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.named_device_every.clear();
  for (auto& s : r.sites)
    if (!s->host_only) s->device_every.store(every_n, std::memory_order_relaxed);
}

/// @brief Device-time every Nth entry of the call sites with this name (0: host only), also of sites with
/// this name first seen later (the name overrides the global setting). Returns how many sites seen so far
/// matched.
SCOPEPROF_API std::size_t set_device_sampling(std::string_view name, std::uint32_t every_n) noexcept {
  detail::initialise();
  detail::registry& r = detail::the_registry();
  std::lock_guard<std::mutex> lock(r.mu);
  try {
    r.named_device_every[detail::truncate_name(name)] = every_n;
  } catch (...) {
  }
  std::size_t n = 0;
  for (auto& s : r.sites)
    if (s->name == name && !s->host_only) {
      s->device_every.store(every_n, std::memory_order_relaxed);
      ++n;
    }
  return n;
}

/// @brief The host clock in use (fixed at start-up).
SCOPEPROF_API clock_kind host_clock() noexcept {
  detail::initialise();
  return detail::g_clock_kind;
}

/// @brief Name the calling thread's track in traces and reports: `scopeprof::set_thread_name("loader");`
SCOPEPROF_API void next_step() noexcept {
#if SCOPEPROF_ENABLED
  if (detail::g_state.load(std::memory_order_acquire) == detail::state_uninitialised) detail::initialise();
  if (detail::g_state.load(std::memory_order_relaxed) != detail::state_on) return;
  detail::registry& r = detail::the_registry();
  detail::thread_buffer* b = detail::t_buffer;
  if (b == nullptr) b = detail::attach_thread();
  const std::uint64_t sequence = r.next_step.fetch_add(1, std::memory_order_relaxed);
  if (b != nullptr && !b->steps.has_room()) {
    detail::step_chunk* c = detail::step_chunk::make(detail::step_chunk_marks);
    if (c != nullptr) b->steps.adopt(c);
  }
  if (b == nullptr || !b->steps.has_room()) {
    r.steps_lost.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  b->steps.push({sequence, detail::read_ticks(), b->depth.load(std::memory_order_relaxed), 0});
#endif
}

SCOPEPROF_API void set_thread_name(std::string_view name) noexcept {
#if SCOPEPROF_ENABLED
  detail::initialise();
  detail::thread_buffer* b = detail::t_buffer;
  if (b == nullptr) b = detail::attach_thread();
  if (b == nullptr) return;
  try {
    std::lock_guard<std::mutex> lock(b->mu);
    b->name = detail::truncate_name(name);
  } catch (...) {
  }
#else
  (void)name;
#endif
}

/// @brief A snapshot of all finished scopes of all threads (running threads keep running; nothing waits
/// for them, and no scope waits for collect()). Never throws: on failure the report is empty and its
/// warnings() say why.
SCOPEPROF_API report collect() noexcept {
  using namespace detail;
  try {
    raw_snapshot raw;
#if SCOPEPROF_ENABLED
    initialise();
    registry& r = the_registry();
    std::lock_guard<std::mutex> serial(r.collect_mu);
    const tick_converter conv = calibrated_converter(r, raw.sources.host);
    raw.origin_ns = r.clock_start.ns;
    raw.process = current_process(raw.origin_ns);
    const registry_view view = view_registry(r);
    drain_pass(r, the_drain(), view);
    fill_snapshot(r, view, conv, raw);
#else
    raw.sources.host = "compiled out (SCOPEPROF_DISABLE)";
    raw.sources.device = "compiled out (SCOPEPROF_DISABLE)";
#endif
    return build_report(std::move(raw));
  } catch (const std::exception& e) {
    detail::raw_snapshot raw;
    raw.warnings = std::string("  warning: collect() failed: ") + e.what() + "\n";
    try {
      return build_report(std::move(raw));
    } catch (...) {
      return report();
    }
  }
}

/// @brief Forget every finished scope recorded so far (scopes open now are kept and recorded when they end)
/// and give their memory back; threads that have exited are forgotten altogether. Never waits for the GPU.
SCOPEPROF_API void reset() noexcept {
#if SCOPEPROF_ENABLED
  using namespace detail;
  initialise();
  registry& r = the_registry();
  try {
    std::lock_guard<std::mutex> serial(r.collect_mu);
    const registry_view view = view_registry(r);
    // What is forgotten below is not folded, but open scopes keep their children's time (self times stay
    // right when they end).
    drain_pass(r, the_drain(), view, pass_kind::forget, pass_scope::everything);
    {
      std::lock_guard<std::mutex> lock(r.mu);
      r.unattached_floor = r.unattached_drops.load(std::memory_order_relaxed);
    }
    r.work_no_scope_floor = r.work_no_scope.load(std::memory_order_relaxed);
    r.work_rejected_floor = r.work_rejected.load(std::memory_order_relaxed);
    r.work_no_memory_floor = r.work_no_memory.load(std::memory_order_relaxed);
    std::vector<reset_thread> threads;  // (buffer, exited)
    threads.reserve(view.threads.size());
    std::vector<thread_buffer*> emptied;
    for (const thread_view& t : view.threads) {
      threads.emplace_back(t.buffer, t.exited);
      discard_thread(r, *t.buffer, t.counters, t.exited);
      if (t.exited) emptied.push_back(t.buffer);
    }
    forget_drained(the_drain(), emptied);
    for_each_backend([&](const backend_hooks& h) {
      if (h.reset != nullptr) h.reset(threads);
    });
    release_exited(r, emptied, [](const std::vector<thread_buffer*>& gone) {
      for_each_backend([&](const backend_hooks& h) {
        if (h.forget_threads != nullptr) h.forget_threads(gone);
      });
    });
  } catch (...) {
    // Out of memory while listing threads: what was freed stays freed; the rest waits for the next reset.
  }
  r.alloc_epoch.fetch_add(1, std::memory_order_acq_rel);
#endif
}

namespace detail {

inline bool ends_with(const std::string& s, const char* suffix) {
  const std::string t(suffix);
  return s.size() >= t.size() && lower(s.substr(s.size() - t.size())) == t;
}

/// The report at exit into a file: the format from the suffix (before a ".gz", which asks for gzip).
/// Without zlib a ".gz" target is written uncompressed, without the ".gz", after one warning.
/// `trace_otherwise`: a path with no known suffix gets a Chrome trace (dump_trace()), else the text tables.
inline write_result write_exit_report(const report& rep, const std::string& pattern, bool trace_otherwise = false) {
  const std::string target = expand_path_template(pattern, rep.process());
  const bool gz = gzip_path(target);
  const std::string plain = gz ? target.substr(0, target.size() - 3) : target;
  std::string path = target;
#if !SCOPEPROF_WITH_ZLIB
  if (gz) {
    warn("SCOPEPROF_REPORT=" + target + ": this program was built without zlib (SCOPEPROF_WITH_ZLIB=0): writing " +
         plain + " uncompressed instead");
    path = plain;
  }
#endif
  if (ends_with(plain, ".csv")) return rep.write_csv(path);
  if (ends_with(plain, ".trace.json")) return rep.write_chrome_trace(path);
  if (ends_with(plain, ".speedscope.json")) return rep.write_speedscope(path);
  if (ends_with(plain, ".json")) return rep.write_json(path);
  if (ends_with(plain, ".html")) return rep.write_html(path);
  if (trace_otherwise) return rep.write_chrome_trace(path);
  return write_to_path(path, "text report", [&rep](output_sink& sink) { sink.text() += rep.to_string(); });
}

/// SCOPEPROF_REPORT at normal exit. Errors are printed, never raised. Registered once at start-up and
/// again after anything that may have initialised the CUDA runtime (rearm_exit_report()): handlers run
/// in reverse order of registration, so the newest runs before the runtime's own teardown, and the
/// others find the report written.
inline void report_at_exit() noexcept {
  static std::atomic<bool> done{false};
  if (done.exchange(true)) return;
  try {
    const std::string target = the_registry().report_target;
    const report rep = collect();
    if (target == "stderr" || target == "stdout") {  // stdio, not iostream: no static initializer in users' TUs
      std::FILE* out = target == "stderr" ? stderr : stdout;
      const std::string text = rep.to_string();
      std::fwrite(text.data(), 1, text.size(), out);
      std::fflush(out);
      return;
    }
    const write_result res = write_exit_report(rep, job_output_path(target, "SCOPEPROF_REPORT", rep.process()));
    if (!res) {
      const std::string& m = res.message();
      warn("SCOPEPROF_REPORT: " + (m.rfind("scopeprof: ", 0) == 0 ? m.substr(11) : m));
    }
  } catch (...) {
    warn("SCOPEPROF_REPORT: the report at exit failed (out of memory)");
  }
}

}  // namespace detail

SCOPEPROF_API bool set_rank(std::int64_t rank, std::int64_t world_size) noexcept {
  if (rank < 0 || world_size <= rank) {
    try {
      detail::warn("set_rank(" + std::to_string(rank) + ", " + std::to_string(world_size) +
                   ") ignored: needs 0 <= rank < world_size");
    } catch (...) {
    }
    return false;
  }
  detail::rank_override& o = detail::the_rank_override();
  std::lock_guard<std::mutex> lock(o.mu);
  o.set = true;
  o.rank = rank;
  o.world_size = world_size;
  return true;
}

SCOPEPROF_API write_result dump_trace(std::string_view path) noexcept {
  try {
    return detail::write_exit_report(collect(), std::string(path), true);
  } catch (...) {
    return write_result::failure("scopeprof: cannot write " + std::string(path) + ": out of memory");
  }
}

namespace detail {

SCOPEPROF_API void rearm_exit_report() noexcept {
  registry& r = the_registry();
  if (!r.report_target.empty()) std::atexit(&report_at_exit);
}

}  // namespace detail
SCOPEPROF_NAMESPACE_END
