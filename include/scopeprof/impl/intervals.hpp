// scopeprof: SCOPEPROF_REPORT_EVERY and set_report_every(): the interval lines (detail/intervals.hpp says
// where each interval ends; format/interval_line.hpp is the line).
//
// Lines are written by whatever drain pass closes an interval: the background drain thread in the normal
// case, collect() or set_trace_policy() otherwise, and one last line at exit for the interval under way.
// Each line is one write() to a file opened for appending, so the lines of a forked child and its parent
// never cut into each other. A file that cannot be written costs its lines (counted, warned once), never
// the tables: the final report counts every scope whatever happened to the lines.
#pragma once

#include <scopeprof/clock.hpp>
#include <scopeprof/config.hpp>
#include <scopeprof/detail/drain.hpp>
#include <scopeprof/detail/env.hpp>
#include <scopeprof/detail/intervals.hpp>
#include <scopeprof/detail/log.hpp>
#include <scopeprof/detail/output_path.hpp>
#include <scopeprof/detail/raw_snapshot.hpp>
#include <scopeprof/detail/recorder.hpp>
#include <scopeprof/detail/snapshot.hpp>
#include <scopeprof/format/interval_line.hpp>
#include <scopeprof/runtime.hpp>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>

#if defined(__unix__) || defined(__APPLE__)
#include <fcntl.h>
#include <unistd.h>
#define SCOPEPROF_HAS_POSIX_APPEND 1
#else
#define SCOPEPROF_HAS_POSIX_APPEND 0
#endif

SCOPEPROF_NAMESPACE_BEGIN
namespace detail {

/// Append `text` to `path` in one write (POSIX: O_APPEND, so concurrent writers never interleave a line).
/// Empty on success, else why not.
inline std::string append_line(const std::string& path, const std::string& text) {
#if SCOPEPROF_HAS_POSIX_APPEND
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return std::strerror(errno);
  std::size_t done = 0;
  std::string why;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      why = n < 0 ? std::strerror(errno) : "nothing written";
      break;
    }
    done += static_cast<std::size_t>(n);
  }
  if (::close(fd) != 0 && why.empty()) why = std::strerror(errno);
  return why;
#else
  std::FILE* f = std::fopen(path.c_str(), "ab");
  if (f == nullptr) return std::strerror(errno);
  const bool written = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  const bool closed = std::fclose(f) == 0;
  return written && closed ? std::string() : std::string("write failed");
#endif
}

/// The counts, sites and clock every line of a pass shares, and the report of one part of it.
inline raw_snapshot interval_snapshot(const registry_view& view, const tick_converter& conv) {
  raw_snapshot raw;
  raw.sites.reserve(view.sites.size());
  for (const site_info* s : view.sites) raw.sites.push_back({s->name, s->file, s->function, s->line});
  for (const thread_view& tv : view.threads) {
    const scope_counts c = describe_thread(tv).desc.counts;
    raw.counts.entered += c.entered;
    raw.counts.recorded += c.recorded;
    raw.counts.dropped += c.dropped;
    raw.counts.in_flight += c.in_flight;
  }
  raw.sources.host = to_string(g_clock_kind);
  raw.folded.present = true;
  raw.folded.device = true;
  raw.folded.ns_per_tick = conv.kind == clock_kind::steady ? 1.0 : conv.ns_per_tick;
  return raw;
}

/// Write the line of part k (the interval that ends at cuts[k]); counts what failed.
inline void write_interval(const registry& r, interval_state& iv, std::size_t k, const raw_snapshot& shared,
                           const tick_converter& conv) noexcept {
  std::string why;
  try {
    const interval_cut& end = iv.cuts[k];
    interval_line_info info;
    info.sequence = iv.lines + iv.lines_failed + 1;
#if SCOPEPROF_HAS_POSIX_APPEND
    info.pid = static_cast<long long>(::getpid());
#endif
    info.every = iv.every.text;
    const std::int64_t end_ns = end.ns != 0 ? end.ns : conv.to_ns(end.ticks);
    info.begin_ns = (k == 0 ? iv.begin_ns : (iv.cuts[k - 1].ns != 0 ? iv.cuts[k - 1].ns : conv.to_ns(iv.cuts[k - 1].ticks))) -
                    r.clock_start.ns;
    info.end_ns = end_ns - r.clock_start.ns;
    const auto unix_now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                              std::chrono::system_clock::now().time_since_epoch()).count();
    info.end_unix_ns = static_cast<std::int64_t>(unix_now) - (steady_now_ns() - end_ns);
    info.steps = iv.every.unit == interval_unit::steps;
    info.first_step = k == 0 ? iv.begin_step : iv.cuts[k - 1].step;
    info.end_step = end.step;
    info.final_line = iv.final_line && k + 1 == iv.cuts.size();
    raw_snapshot raw = shared;
    raw.folded.tree = iv.parts[k];
    const report rep = build_report(std::move(raw));
    why = append_line(dump_path(job_output_path(iv.path, "SCOPEPROF_REPORT_EVERY_PATH", rep.process()), 0),
                      interval_json_line(rep, info));
  } catch (...) {
    why = "out of memory";
  }
  if (why.empty()) {
    ++iv.lines;
    return;
  }
  ++iv.lines_failed;
  if (!iv.warned)
    warn("SCOPEPROF_REPORT_EVERY: cannot write " + detail::quoted(iv.path) + " (" + why +
         "): its interval lines are lost (counted), the tables are not");
  iv.warned = true;
}

SCOPEPROF_API void close_intervals(registry& r, drain_state& d, const registry_view& view) noexcept {
  interval_state& iv = d.intervals;
  const tick_converter conv = tick_converter::between(g_clock_kind, r.clock_start, read_anchor());
  raw_snapshot shared;
  try {
    shared = interval_snapshot(view, conv);
  } catch (...) {
  }
  for (std::size_t k = 0; k < iv.cuts.size(); ++k) {
    write_interval(r, iv, k, shared, conv);
    try {
      d.tree.graft(iv.parts[k], path_tree::root);
    } catch (...) {
      ++d.fold_failed;  // out of memory: some of the interval's paths are missing from the run's tables
    }
    iv.parts[k].clear();
  }
  const interval_cut last = iv.cuts.back();
  std::swap(iv.parts[0], iv.parts[iv.cuts.size()]);
  iv.begin_ticks = last.ticks;
  iv.begin_ns = last.ns != 0 ? last.ns : conv.to_ns(last.ticks);
  if (iv.every.unit == interval_unit::steps) iv.begin_step = last.step;
  if (iv.every.unit == interval_unit::nanoseconds && !iv.final_line) iv.due_ns = iv.next_due_ns;
  iv.cuts.clear();
}

/// At exit: one last line for the interval under way.
inline void intervals_at_exit() noexcept {
  try {
    registry& r = the_registry();
    std::lock_guard<std::mutex> serial(r.collect_mu);
    drain_state& d = the_drain();
    if (!d.intervals.active()) return;
    d.intervals.final_line = true;
    drain_pass(r, d, view_registry(r));
    d.intervals.final_line = false;
  } catch (...) {
  }
}

/// Switch the interval lines to `every` (parsed) written to `path` ("" for the default). Under collect_mu.
/// The interval under way so far is added to the run's tables without a line.
inline void apply_report_every(registry& r, drain_state& d, const interval_every& every, const std::string& path) {
  interval_state& iv = d.intervals;
  for (path_tree& part : iv.parts) {
    d.tree.graft(part, path_tree::root);
    part.clear();
  }
  iv.every = every;
  iv.path = path.empty() ? default_interval_path(r.report_target) : path;
  const clock_anchor now = read_anchor();
  iv.begin_ticks = now.ticks;
  iv.begin_ns = now.ns;
  iv.begin_step = r.next_step.load(std::memory_order_relaxed);
  iv.due_ns = now.ns + static_cast<std::int64_t>(every.n);
  iv.warned = false;
  iv.lines = iv.lines_failed = 0;  // lines are numbered from 1 for each setting
  if (!iv.active()) return;
  static std::once_flag at_exit;
  std::call_once(at_exit, [] { std::atexit(&intervals_at_exit); });
  if (r.drain_thread.load(std::memory_order_acquire) == drain_off)
    warn("SCOPEPROF_REPORT_EVERY=" + every.text +
         ": the background drain thread is off (SCOPEPROF_DRAIN=0), so interval lines are written only when "
         "collect() runs, and at exit");
  else
    start_drain_thread();
}

/// SCOPEPROF_REPORT_EVERY and SCOPEPROF_REPORT_EVERY_PATH, at start-up (after the clock's start and the
/// report's target are known).
inline void configure_intervals(registry& r) {
  const std::string value = env_string("SCOPEPROF_REPORT_EVERY");
  if (value.empty()) return;
  interval_every every;
  std::string why;
  if (!parse_interval_every(lower(value), every, why)) {
    warn("SCOPEPROF_REPORT_EVERY=" + detail::quoted(value) + " ignored (" + why + ")");
    return;
  }
  std::lock_guard<std::mutex> serial(r.collect_mu);
  apply_report_every(r, the_drain(), every, env_string("SCOPEPROF_REPORT_EVERY_PATH"));
}

}  // namespace detail

SCOPEPROF_API bool set_report_every(std::string_view every, std::string_view path) noexcept {
  using namespace detail;
  initialise();
  try {
    const std::string value(every);
    interval_every parsed;
    std::string why;
    if (!parse_interval_every(lower(value), parsed, why)) {
      warn("set_report_every(" + detail::quoted(value) + ") ignored: " + why);
      return false;
    }
    registry& r = the_registry();
    std::lock_guard<std::mutex> serial(r.collect_mu);
    drain_state& d = the_drain();
    // What ended so far goes by the previous setting (scopes whose device work still runs: the new one).
    drain_pass(r, d, view_registry(r), pass_kind::fold, pass_scope::background);
    apply_report_every(r, d, parsed, std::string(path));
    return true;
  } catch (...) {
    return false;
  }
}

SCOPEPROF_NAMESPACE_END
