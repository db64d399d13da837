// scopeprof: the report model. A report is an immutable snapshot: every finished scope instance, the call
// tree, a flat per-name table and a per-path tree table, with host and device quantities kept apart.
//
//   auto r = scopeprof::collect();
//   r.print(std::cout);                              // tables
//   if (auto ok = r.write_chrome_trace("t.json"); !ok) std::cerr << ok.message() << "\n";
#pragma once

#include <scopeprof/config.hpp>
#include <scopeprof/report_types.hpp>

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

SCOPEPROF_NAMESPACE_BEGIN
namespace detail {
struct raw_snapshot;
class report_builder;
class report_loader;
class deferred_instances;
}  // namespace detail

/// @brief An immutable snapshot of finished scopes; every writer is a pure function of it.
class report {
 public:
  report() = default;

  const scope_counts& counts() const noexcept { return counts_; }
  /// @brief What the timeline kept (SCOPEPROF_TRACE): instances() holds `kept` of the recorded scopes.
  const timeline_counts& timeline() const noexcept { return timeline_; }
  const std::vector<site_desc>& sites() const noexcept { return sites_; }
  const std::vector<thread_desc>& threads() const noexcept { return threads_; }
  /// Pre-order per thread: a parent comes before its children, siblings by begin time. collect() leaves
  /// them to be built on the first call (from any thread, once; the tables never need them), so that
  /// call costs what collect() saved. If memory runs out building them, the list is empty and
  /// instances_lost() says so.
  const std::vector<scope_instance>& instances() const noexcept;
  /// True when the timeline kept instances that instances() could not build (out of memory).
  bool instances_lost() const noexcept;
  const std::vector<flat_row>& flat() const noexcept { return flat_; }
  /// Depth-first: a row is followed by its children, heaviest host total first.
  const std::vector<tree_row>& tree() const noexcept { return tree_; }
  const evidence& sources() const noexcept { return sources_; }
  const std::string& warnings() const noexcept { return warnings_; }
  /// Time zero of traces (steady_clock ns): the library's start.
  std::int64_t origin_ns() const noexcept { return origin_ns_; }
  /// Which process of a job this is: rank, world size, host, pid, devices, and the Unix time of origin_ns().
  const process_desc& process() const noexcept { return process_; }
  /// Scopes the tables place at the root because their parent's record is missing (dropped) or their
  /// parent was still open when the report was taken.
  std::uint64_t orphan_count() const noexcept { return orphans_; }
  /// What became of the work declared with PROF_SCOPE_WORK and add_work() (rows hold the sums).
  const work_counts& work() const noexcept { return work_; }
  /// The peaks of the devices scopes timed on (spec from their attributes; measured after
  /// calibrate_device() or SCOPEPROF_CALIBRATE=1), by device id.
  const std::vector<device_peak>& device_peaks() const noexcept { return peaks_; }
  /// The peaks of device `id`, or nullptr.
  const device_peak* peak_of(std::int32_t id) const noexcept {
    for (const auto& p : peaks_)
      if (p.device == id) return &p;
    return nullptr;
  }
  /// CUPTI kernels, copies and memsets by begin time (empty unless sources().cupti_valid).
  const std::vector<device_activity>& activities() const noexcept { return activities_; }
  /// Kernel names exactly as CUPTI gives them (C++ kernels mangled), indexed by device_activity::name.
  const std::vector<std::string>& activity_names() const noexcept { return activity_names_; }
  /// The same names demangled (unchanged where there is nothing to demangle).
  const std::vector<std::string>& activity_demangled_names() const noexcept { return activity_demangled_; }
  /// Kernel summary by (scope name, kernel name), heaviest total first (empty unless sources().cupti_valid).
  const std::vector<kernel_summary_row>& kernel_summary() const noexcept { return kernel_summary_; }

  /// Complete steps (next_step() to next_step()) by index; empty when the program marks none.
  const std::vector<step_span>& steps() const noexcept { return steps_; }
  /// Their count and the distribution of host time per step.
  const step_summary& step_stats() const noexcept { return step_stats_; }

  /// The flat row with this name, or nullptr.
  const flat_row* find(const std::string& name) const noexcept {
    for (const auto& r : flat_)
      if (r.name == name) return &r;
    return nullptr;
  }

  // write_*: a path ending in ".gz" is written as gzip (SCOPEPROF_WITH_ZLIB builds; without zlib such a
  // path is refused, and the message says so).

  /// Text tables (tree view, then flat view) with the evidence header and the footnotes.
  void print(std::ostream& out) const;
  std::string to_string() const;
  /// Flat and tree rows plus the counts, RFC 4180, times in microseconds.
  write_result write_csv(const std::string& path) const;
  std::string csv() const;
  /// Everything above as JSON (schema in docs/formats.md).
  write_result write_json(const std::string& path) const;
  std::string json() const;
  /// Chrome trace event format, loadable in Perfetto and chrome://tracing.
  write_result write_chrome_trace(const std::string& path) const;
  std::string chrome_trace() const;
  /// speedscope's file format (name it *.speedscope.json): one profile per host thread and per device
  /// stream, frames named by scope, integer nanoseconds.
  write_result write_speedscope(const std::string& path) const;
  std::string speedscope() const;
  /// One self-contained HTML page (name it *.html): the header with the evidence, sortable tree and flat
  /// tables, an icicle of host total beside device span, duration histograms, root scopes over time.
  /// It opens offline and loads nothing.
  write_result write_html(const std::string& path) const;
  std::string html() const;

 private:
  friend class detail::report_builder;  // detail::build_report() fills a report through it
  friend class detail::report_loader;   // the scopeprof tool (cli/) fills one from a saved JSON report
  scope_counts counts_;
  timeline_counts timeline_;
  std::vector<site_desc> sites_;
  std::vector<thread_desc> threads_;
  std::vector<scope_instance> instances_;
  std::shared_ptr<detail::deferred_instances> deferred_;  // set: instances() builds them (copies share it)
  std::vector<flat_row> flat_;
  std::vector<tree_row> tree_;
  evidence sources_;
  std::string warnings_;
  std::int64_t origin_ns_ = 0;
  process_desc process_;
  std::uint64_t orphans_ = 0;
  work_counts work_;
  std::vector<device_peak> peaks_;
  std::vector<device_activity> activities_;
  std::vector<std::string> activity_names_;
  std::vector<std::string> activity_demangled_;
  std::vector<kernel_summary_row> kernel_summary_;
  std::vector<step_span> steps_;
  step_summary step_stats_;
};

SCOPEPROF_NAMESPACE_END
