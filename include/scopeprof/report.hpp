// scopeprof: the report model. A report is an immutable snapshot: every finished scope instance, the call
// tree, a flat per-name table and a per-path tree table, with host and device quantities kept apart.
//
//   auto r = scopeprof::collect();
//   r.print(std::cout);                              // tables
//   if (auto ok = r.write_chrome_trace("t.json"); !ok) std::cerr << ok.message() << "\n";
#pragma once

#include <scopeprof/clock.hpp>
#include <scopeprof/config.hpp>
#include <scopeprof/detail/demangle.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

SCOPEPROF_NAMESPACE_BEGIN

/// @brief Accounting of scope entries: entered == recorded + dropped + in_flight, always.
struct scope_counts {
  std::uint64_t entered = 0;    ///< scopes begun since start (or the last reset)
  std::uint64_t recorded = 0;   ///< finished scopes whose record is in this report
  std::uint64_t dropped = 0;    ///< finished scopes that found the record buffer full (see set_max_records)
  std::uint64_t in_flight = 0;  ///< scopes still open when the report was taken
};

/// @brief What a report says about device time for one scope instance.
enum class device_status : std::uint8_t {
  not_timed = 0,  ///< no device timing for this instance (off, sampled out, no device, or not built)
  ok = 1,         ///< device_begin_ns / device_end_ns are valid
  captured = 2,   ///< inside a CUDA graph capture that could not be timed: "n/a (captured)"
  invalid = 3,    ///< a CUDA error made the events unusable
};

/// @brief One finished scope instance. Times are steady_clock nanoseconds (device times mapped onto it).
struct scope_instance {
  std::uint32_t site = 0;     ///< index into report::sites()
  std::uint32_t thread = 0;   ///< index into report::threads()
  std::int64_t parent = -1;   ///< index into report::instances(), -1 for a root
  std::uint32_t depth = 0;    ///< depth in the reconstructed tree (0 = root)
  bool orphan = false;        ///< its parent was still open (or dropped) when the report was taken
  std::int64_t host_begin_ns = 0;
  std::int64_t host_end_ns = 0;
  std::int64_t host_self_ns = 0;  ///< host total minus the host totals of its children
  device_status device = device_status::not_timed;
  std::int32_t device_id = -1;
  std::uint64_t stream = 0;  ///< the CUDA stream handle the span was timed on
  std::int64_t device_begin_ns = 0;
  std::int64_t device_end_ns = 0;
  std::int64_t device_self_ns = 0;  ///< span minus the union of child spans on the same stream
  // CUPTI (valid when sources().cupti_valid): work launched inside the scope, its children included.
  std::uint32_t kernels = 0;             ///< kernels launched inside the scope (children included)
  std::uint32_t kernels_self = 0;        ///< kernels whose innermost launching scope is this one
  std::uint32_t copies = 0;              ///< memcpy and memset operations (children included)
  std::int64_t device_busy_ns = 0;       ///< sum of the durations of those kernels and copies
  std::int64_t device_busy_self_ns = 0;  ///< the same for the work this scope launched directly

  std::int64_t host_total_ns() const noexcept { return host_end_ns - host_begin_ns; }
  std::int64_t device_span_ns() const noexcept { return device_end_ns - device_begin_ns; }
};

/// @brief What a CUPTI activity record describes.
enum class activity_kind : std::uint8_t { kernel = 0, memcpy = 1, memset = 2 };

/// @brief One kernel, copy or memset from CUPTI, on the host timeline (steady_clock ns).
struct device_activity {
  activity_kind kind = activity_kind::kernel;
  std::int64_t instance = -1;  ///< index into report::instances() of the innermost launching scope; -1: none
  std::uint32_t name = 0;      ///< index into report::activity_names()
  std::int32_t device = -1;
  std::uint32_t stream = 0;    ///< CUPTI stream id
  std::uint32_t graph = 0;     ///< CUDA graph id, 0 when not launched by a graph
  std::int64_t begin_ns = 0;
  std::int64_t end_ns = 0;
  std::int64_t duration_ns() const noexcept { return end_ns - begin_ns; }
};

struct site_desc {
  std::string name;
  std::string file;
  std::string function;
  std::uint32_t line = 0;
};

struct thread_desc {
  std::uint32_t index = 0;   ///< order in which threads first entered a scope
  std::uint64_t os_id = 0;   ///< kernel thread id where known
  std::string name;          ///< set_thread_name(), or empty
  bool exited = false;       ///< the thread ended before the report was taken
  scope_counts counts;
};

/// @brief Summary of a set of durations (nanoseconds). StdDev is the population standard deviation.
struct duration_stats {
  std::uint64_t count = 0;
  std::int64_t sum = 0;
  std::int64_t min = 0;
  std::int64_t max = 0;
  double mean = 0;
  double median = 0;
  double stddev = 0;

  static duration_stats of(std::vector<std::int64_t> values) {
    duration_stats s;
    s.count = values.size();
    if (values.empty()) return s;
    std::sort(values.begin(), values.end());
    s.min = values.front();
    s.max = values.back();
    long double sum = 0;
    for (auto v : values) sum += v;
    s.sum = static_cast<std::int64_t>(sum);
    s.mean = static_cast<double>(sum / values.size());
    const std::size_t n = values.size();
    s.median = n % 2 ? static_cast<double>(values[n / 2])
                     : (static_cast<double>(values[n / 2 - 1]) + static_cast<double>(values[n / 2])) / 2.0;
    long double sq = 0;
    for (auto v : values) sq += (v - s.mean) * (v - s.mean);
    s.stddev = std::sqrt(static_cast<double>(sq / n));
    return s;
  }
};

/// @brief One row of the flat table: every instance with this name, on every thread.
struct flat_row {
  std::string name;
  std::uint64_t calls = 0;
  /// Inclusive host time, counting an instance nested in another of the same name only once.
  std::int64_t host_total_ns = 0;
  std::int64_t host_self_ns = 0;
  duration_stats host;       ///< over every instance's inclusive host time
  double host_time_pct = 0;  ///< this row's host self time as a share of all host self time
  std::uint64_t device_calls = 0;  ///< instances with a valid device span
  std::int64_t device_total_ns = 0;
  std::int64_t device_self_ns = 0;
  duration_stats device;
  std::uint64_t device_captured = 0;  ///< instances whose device time is "n/a (captured)"
  std::uint64_t device_invalid = 0;
  std::uint64_t kernels = 0;            ///< CUPTI: kernels launched inside these scopes (children included)
  std::uint64_t copies = 0;             ///< CUPTI: memcpy and memset operations (children included)
  std::int64_t device_busy_ns = 0;      ///< CUPTI: their summed durations, a name nested in itself counted once
  std::int64_t device_busy_self_ns = 0; ///< CUPTI: the same for the work launched directly by these scopes
};

/// @brief One row of the kernel summary (the columns of Nsight Systems' cuda_gpu_kern_sum), per scope
/// name and kernel name. Time % is the row's share of all kernel time in the report.
struct kernel_summary_row {
  std::string scope;    ///< innermost launching scope's name, "(no scope)" for kernels launched outside any
  std::string kernel;   ///< kernel name demangled (C++ kernels), as Nsight Systems' kernel summary shows it
  std::string mangled;  ///< kernel name exactly as CUPTI gives it (the symbol), bytes kept as they are
  duration_stats time;
  double time_pct = 0;
};

/// @brief What the device columns of a row say when there is no valid device time (or "ok").
/// A CUDA error outranks a capture: it says the evidence itself is broken.
inline const char* device_status_text(std::uint64_t device_calls, std::uint64_t captured, std::uint64_t invalid) noexcept {
  if (device_calls) return "ok";
  if (invalid) return "n/a (CUDA error)";
  if (captured) return "n/a (captured)";
  return "n/a";
}

/// @brief One row of the tree table: every instance reached by the same path of names.
struct tree_row {
  std::string name;
  std::uint32_t depth = 0;
  std::int64_t parent = -1;  ///< index into report::tree(), -1 for a root
  std::uint64_t calls = 0;
  std::int64_t host_total_ns = 0;
  std::int64_t host_self_ns = 0;
  std::uint64_t device_calls = 0;
  std::int64_t device_total_ns = 0;
  std::int64_t device_self_ns = 0;
  std::uint64_t kernels = 0;  ///< CUPTI, children included
  std::uint64_t copies = 0;
  std::int64_t device_busy_ns = 0;
  std::int64_t device_busy_self_ns = 0;
};

/// @brief Which evidence each column comes from, and whether it is valid for this run.
struct evidence {
  std::string host = "host clock";
  bool device_valid = false;
  std::string device = "n/a (built without CUDA: SCOPEPROF_WITH_CUDA=0)";
  bool cupti_valid = false;  ///< the CUPTI columns (busy, kernels, kernel summary) hold data
  std::string cupti = "not collected (CUPTI collector not built)";
  std::string torch = "not built (SCOPEPROF_WITH_TORCH=0)";
};

/// @brief What the CUPTI cells say: "ok" when CUPTI evidence is valid, else a short reason ("n/a" when it
/// was not collected, "withheld" when another tool held CUPTI, "invalid" when records were lost).
inline const char* cupti_status_text(const evidence& e) noexcept {
  if (e.cupti_valid) return "ok";
  if (e.cupti.rfind("withheld", 0) == 0) return "withheld";
  if (e.cupti.rfind("invalid", 0) == 0) return "invalid";
  return "n/a";
}

/// @brief Result of a writer: converts to true on success, else message() says what failed and where.
class write_result {
 public:
  write_result() = default;
  static write_result failure(std::string message) {
    write_result r;
    r.ok_ = false;
    r.message_ = std::move(message);
    return r;
  }
  explicit operator bool() const noexcept { return ok_; }
  bool ok() const noexcept { return ok_; }
  const std::string& message() const noexcept { return message_; }

 private:
  bool ok_ = true;
  std::string message_;
};

namespace detail {

/// What collect() gathers before any analysis: one thread's records, already converted to nanoseconds.
struct raw_instance {
  std::uint32_t site = 0;
  std::uint32_t depth = 0;  // nesting level at entry, as recorded
  std::int64_t host_begin_ns = 0;
  std::int64_t host_end_ns = 0;
  device_status device = device_status::not_timed;
  std::int32_t device_id = -1;
  std::uint64_t stream = 0;
  std::int64_t device_begin_ns = 0;
  std::int64_t device_end_ns = 0;
};

/// A CUPTI record as collect() attributes it: thread = position in raw_snapshot::threads, record =
/// position in that thread's records (-1 for both: launched outside any recorded scope).
struct raw_activity {
  activity_kind kind = activity_kind::kernel;
  std::int64_t thread = -1;
  std::int64_t record = -1;
  std::uint32_t name = 0;  // index into raw_snapshot::activity_names
  std::int32_t device = -1;
  std::uint32_t stream = 0;
  std::uint32_t graph = 0;
  std::int64_t begin_ns = 0;
  std::int64_t end_ns = 0;
};

struct raw_thread {
  thread_desc desc;
  std::vector<raw_instance> records;  // in the order scopes ended (post-order)
};

struct raw_snapshot {
  std::vector<site_desc> sites;
  std::vector<raw_thread> threads;
  scope_counts counts;
  evidence sources;
  std::int64_t origin_ns = 0;  // the process's time zero for traces
  std::string warnings;        // lines the report prints in its header
  std::vector<raw_activity> activities;  // CUPTI records (used only when sources.cupti_valid)
  std::vector<std::string> activity_names;
};

class report_builder;

}  // namespace detail

/// @brief An immutable snapshot of finished scopes; every writer is a pure function of it.
class report {
 public:
  report() = default;

  const scope_counts& counts() const noexcept { return counts_; }
  const std::vector<site_desc>& sites() const noexcept { return sites_; }
  const std::vector<thread_desc>& threads() const noexcept { return threads_; }
  /// Pre-order per thread: a parent comes before its children, siblings by begin time.
  const std::vector<scope_instance>& instances() const noexcept { return instances_; }
  const std::vector<flat_row>& flat() const noexcept { return flat_; }
  /// Depth-first: a row is followed by its children, heaviest host total first.
  const std::vector<tree_row>& tree() const noexcept { return tree_; }
  const evidence& sources() const noexcept { return sources_; }
  const std::string& warnings() const noexcept { return warnings_; }
  /// Time zero of traces (steady_clock ns): the library's start.
  std::int64_t origin_ns() const noexcept { return origin_ns_; }
  std::uint64_t orphan_count() const noexcept { return orphans_; }
  /// CUPTI kernels, copies and memsets by begin time (empty unless sources().cupti_valid).
  const std::vector<device_activity>& activities() const noexcept { return activities_; }
  /// Kernel names exactly as CUPTI gives them (C++ kernels mangled), indexed by device_activity::name.
  const std::vector<std::string>& activity_names() const noexcept { return activity_names_; }
  /// The same names demangled (unchanged where there is nothing to demangle).
  const std::vector<std::string>& activity_demangled_names() const noexcept { return activity_demangled_; }
  /// Kernel summary by (scope name, kernel name), heaviest total first (empty unless sources().cupti_valid).
  const std::vector<kernel_summary_row>& kernel_summary() const noexcept { return kernel_summary_; }

  /// The flat row with this name, or nullptr.
  const flat_row* find(const std::string& name) const noexcept {
    for (const auto& r : flat_)
      if (r.name == name) return &r;
    return nullptr;
  }

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

  /// Build a report from raw per-thread records (collect() does this; tests may too).
  static report from_raw(detail::raw_snapshot raw);

 private:
  friend class detail::report_builder;
  scope_counts counts_;
  std::vector<site_desc> sites_;
  std::vector<thread_desc> threads_;
  std::vector<scope_instance> instances_;
  std::vector<flat_row> flat_;
  std::vector<tree_row> tree_;
  evidence sources_;
  std::string warnings_;
  std::int64_t origin_ns_ = 0;
  std::uint64_t orphans_ = 0;
  std::vector<device_activity> activities_;
  std::vector<std::string> activity_names_;
  std::vector<std::string> activity_demangled_;
  std::vector<kernel_summary_row> kernel_summary_;
};

namespace detail {

class report_builder {
 public:
  static report build(raw_snapshot raw) {
    report r;
    r.counts_ = raw.counts;
    r.sites_ = std::move(raw.sites);
    r.sources_ = std::move(raw.sources);
    r.warnings_ = std::move(raw.warnings);
    r.origin_ns_ = raw.origin_ns;
    std::vector<std::vector<std::int64_t>> instance_of(raw.threads.size());
    for (std::size_t t = 0; t < raw.threads.size(); ++t) {
      r.threads_.push_back(raw.threads[t].desc);
      add_thread(r, raw.threads[t].records, static_cast<std::uint32_t>(t), instance_of[t]);
      std::vector<raw_instance>().swap(raw.threads[t].records);
    }
    if (r.sources_.cupti_valid) add_activities(r, raw, instance_of);
    compute_device_self(r);
    build_flat(r);
    build_tree(r);
    return r;
  }

 private:
  static bool contains(const raw_instance& outer, const raw_instance& inner) noexcept {
    return outer.host_begin_ns <= inner.host_begin_ns && inner.host_end_ns <= outer.host_end_ns;
  }

  // Records arrive in post-order with their nesting level: a scope's children are the records one level
  // deeper that ended since the previous record at its own level. A child that does not lie inside the
  // adopting scope (its true parent was dropped) becomes an orphan root instead of being misattributed.
  static void add_thread(report& r, const std::vector<raw_instance>& recs, std::uint32_t thread,
                         std::vector<std::int64_t>& instance_of) {
    const std::size_t n = recs.size();
    instance_of.assign(n, -1);
    std::vector<std::vector<std::uint32_t>> children(n);
    std::vector<std::vector<std::uint32_t>> pending;  // by recorded depth
    std::vector<std::uint32_t> roots;
    std::vector<char> orphan(n, 0);
    for (std::uint32_t i = 0; i < n; ++i) {
      const std::uint32_t d = recs[i].depth;
      if (pending.size() < d + 2) pending.resize(d + 2);
      for (std::size_t k = pending.size() - 1; k > d + 1; --k) {  // deeper than a child: parent lost
        for (auto c : pending[k]) orphan[c] = 1, roots.push_back(c);
        pending[k].clear();
      }
      for (auto c : pending[d + 1]) {
        if (contains(recs[i], recs[c])) children[i].push_back(c);
        else orphan[c] = 1, roots.push_back(c);
      }
      pending[d + 1].clear();
      pending[d].push_back(i);
    }
    for (std::size_t k = 0; k < pending.size(); ++k)
      for (auto c : pending[k]) {
        if (k > 0) orphan[c] = 1;
        roots.push_back(c);
      }
    const auto by_begin = [&](std::uint32_t a, std::uint32_t b) {
      return recs[a].host_begin_ns != recs[b].host_begin_ns ? recs[a].host_begin_ns < recs[b].host_begin_ns
                                                            : recs[a].depth < recs[b].depth;
    };
    std::stable_sort(roots.begin(), roots.end(), by_begin);
    // Emit in pre-order with an explicit stack (nesting may be deep).
    struct frame {
      std::uint32_t rec;
      std::int64_t parent;
      std::uint32_t depth;
    };
    std::vector<frame> stack;
    for (auto it = roots.rbegin(); it != roots.rend(); ++it) stack.push_back({*it, -1, 0});
    while (!stack.empty()) {
      const frame f = stack.back();
      stack.pop_back();
      const raw_instance& x = recs[f.rec];
      scope_instance s;
      s.site = x.site;
      s.thread = thread;
      s.parent = f.parent;
      s.depth = f.depth;
      s.orphan = orphan[f.rec] != 0;
      s.host_begin_ns = x.host_begin_ns;
      s.host_end_ns = x.host_end_ns;
      std::int64_t child_total = 0;
      for (auto c : children[f.rec]) child_total += recs[c].host_end_ns - recs[c].host_begin_ns;
      s.host_self_ns = (x.host_end_ns - x.host_begin_ns) - child_total;
      s.device = x.device;
      s.device_id = x.device_id;
      s.stream = x.stream;
      s.device_begin_ns = x.device_begin_ns;
      s.device_end_ns = x.device_end_ns;
      if (s.orphan) ++r.orphans_;
      const auto index = static_cast<std::int64_t>(r.instances_.size());
      instance_of[f.rec] = index;
      r.instances_.push_back(s);
      auto& ch = children[f.rec];
      std::stable_sort(ch.begin(), ch.end(), by_begin);
      for (auto it = ch.rbegin(); it != ch.rend(); ++it) stack.push_back({*it, index, f.depth + 1});
    }
  }

  // CUPTI records: each belongs to the innermost scope that launched it; a scope's inclusive counts add its
  // children's (instances are in pre-order, so children come after their parent).
  static void add_activities(report& r, raw_snapshot& raw, const std::vector<std::vector<std::int64_t>>& instance_of) {
    r.activity_names_ = std::move(raw.activity_names);
    r.activity_demangled_.reserve(r.activity_names_.size());
    for (const auto& n : r.activity_names_) r.activity_demangled_.push_back(demangle(n));  // once per name
    r.activities_.reserve(raw.activities.size());
    auto& in = r.instances_;
    for (const raw_activity& a : raw.activities) {
      if (a.name >= r.activity_names_.size() || a.end_ns < a.begin_ns) continue;
      device_activity d;
      d.kind = a.kind;
      d.name = a.name;
      d.device = a.device;
      d.stream = a.stream;
      d.graph = a.graph;
      d.begin_ns = a.begin_ns;
      d.end_ns = a.end_ns;
      if (a.thread >= 0 && static_cast<std::size_t>(a.thread) < instance_of.size() && a.record >= 0 &&
          static_cast<std::size_t>(a.record) < instance_of[static_cast<std::size_t>(a.thread)].size())
        d.instance = instance_of[static_cast<std::size_t>(a.thread)][static_cast<std::size_t>(a.record)];
      if (d.instance >= 0) {
        scope_instance& s = in[static_cast<std::size_t>(d.instance)];
        if (d.kind == activity_kind::kernel) ++s.kernels_self;
        else ++s.copies;
        s.device_busy_self_ns += d.duration_ns();
      }
      r.activities_.push_back(d);
    }
    std::stable_sort(r.activities_.begin(), r.activities_.end(),
                     [](const device_activity& a, const device_activity& b) { return a.begin_ns < b.begin_ns; });
    for (auto& s : in) {
      s.kernels = s.kernels_self;
      s.device_busy_ns = s.device_busy_self_ns;
    }
    // copies holds the scope's own count so far; add children bottom-up (reverse pre-order).
    for (std::size_t i = in.size(); i-- > 0;) {
      const auto& c = in[i];
      if (c.parent < 0) continue;
      auto& p = in[static_cast<std::size_t>(c.parent)];
      p.kernels += c.kernels;
      p.copies += c.copies;
      p.device_busy_ns += c.device_busy_ns;
    }
    // Kernel summary by (scope name, kernel name).
    std::unordered_map<std::string, std::size_t> group;
    std::vector<std::vector<std::int64_t>> durations;
    std::int64_t all = 0;
    for (const auto& d : r.activities_) {
      if (d.kind != activity_kind::kernel) continue;
      const std::string scope =
          d.instance < 0 ? std::string("(no scope)")
                         : (in[static_cast<std::size_t>(d.instance)].site < r.sites_.size()
                                ? r.sites_[in[static_cast<std::size_t>(d.instance)].site].name
                                : std::string());
      std::string key = scope;
      key += '\0';
      key += std::to_string(d.name);
      auto it = group.emplace(std::move(key), r.kernel_summary_.size());
      if (it.second) {
        r.kernel_summary_.emplace_back();
        r.kernel_summary_.back().scope = scope;
        r.kernel_summary_.back().kernel = r.activity_demangled_[d.name];
        r.kernel_summary_.back().mangled = r.activity_names_[d.name];
        durations.emplace_back();
      }
      durations[it.first->second].push_back(d.duration_ns());
      all += d.duration_ns();
    }
    for (std::size_t g = 0; g < r.kernel_summary_.size(); ++g) {
      auto& row = r.kernel_summary_[g];
      row.time = duration_stats::of(std::move(durations[g]));
      row.time_pct = all > 0 ? 100.0 * static_cast<double>(row.time.sum) / static_cast<double>(all) : 0.0;
    }
    std::stable_sort(r.kernel_summary_.begin(), r.kernel_summary_.end(),
                     [](const kernel_summary_row& a, const kernel_summary_row& b) { return a.time.sum > b.time.sum; });
  }

  // Device self = span minus the union of the spans of its nearest device-timed descendants on the same
  // device and stream, whatever lies between (host-only, sampled-out or other-stream scopes): so the self
  // column of one stream adds up to the spans of its outermost scopes, and nothing is subtracted twice.
  static void compute_device_self(report& r) {
    auto& in = r.instances_;
    std::vector<std::vector<std::pair<std::int64_t, std::int64_t>>> child_spans(in.size());
    // Instances are in pre-order: walk them with the chain of open ancestors and, per (device, stream), a
    // stack of the timed ones among them, whose top is the nearest (linear in the instances, any depth).
    using stream_key = std::pair<std::int32_t, std::uint64_t>;
    std::map<stream_key, std::vector<std::size_t>> timed_ancestors;
    std::vector<std::size_t> chain;
    for (std::size_t i = 0; i < in.size(); ++i) {
      const auto& c = in[i];
      while (!chain.empty() && (c.parent < 0 || chain.back() != static_cast<std::size_t>(c.parent))) {
        const auto& gone = in[chain.back()];
        if (gone.device == device_status::ok) timed_ancestors[{gone.device_id, gone.stream}].pop_back();
        chain.pop_back();
      }
      if (c.device == device_status::ok) {
        auto& stack = timed_ancestors[{c.device_id, c.stream}];
        if (!stack.empty()) child_spans[stack.back()].push_back({c.device_begin_ns, c.device_end_ns});
        stack.push_back(i);
      }
      chain.push_back(i);
    }
    for (std::size_t i = 0; i < in.size(); ++i) {
      auto& s = in[i];
      if (s.device != device_status::ok) continue;
      auto& spans = child_spans[i];
      std::sort(spans.begin(), spans.end());
      std::int64_t covered = 0, cur_b = 0, cur_e = 0;
      bool open = false;
      for (auto sp : spans) {
        const std::int64_t b = (std::max)(sp.first, s.device_begin_ns);
        const std::int64_t e = (std::min)(sp.second, s.device_end_ns);
        if (e <= b) continue;
        if (open && b <= cur_e) {
          cur_e = (std::max)(cur_e, e);
        } else {
          if (open) covered += cur_e - cur_b;
          cur_b = b, cur_e = e, open = true;
        }
      }
      if (open) covered += cur_e - cur_b;
      s.device_self_ns = s.device_span_ns() - covered;
    }
  }

  static void build_flat(report& r) {
    std::unordered_map<std::string, std::size_t> by_name;
    std::vector<std::size_t> group_of_site(r.sites_.size());
    for (std::size_t s = 0; s < r.sites_.size(); ++s) {
      auto it = by_name.emplace(r.sites_[s].name, r.flat_.size());
      if (it.second) {
        r.flat_.emplace_back();
        r.flat_.back().name = r.sites_[s].name;
      }
      group_of_site[s] = it.first->second;
    }
    const std::size_t groups = r.flat_.size();
    std::vector<std::vector<std::int64_t>> host(groups), device(groups);
    std::vector<std::uint32_t> active(groups, 0);  // open ancestors with the same name
    std::vector<std::size_t> stack;                // groups of the current ancestor chain
    std::int64_t all_self = 0;
    for (const auto& s : r.instances_) {
      if (s.depth == 0) {
        for (auto g : stack) --active[g];
        stack.clear();
      }
      while (stack.size() > s.depth) {
        --active[stack.back()];
        stack.pop_back();
      }
      const std::size_t g = s.site < group_of_site.size() ? group_of_site[s.site] : 0;
      if (groups == 0) break;
      flat_row& row = r.flat_[g];
      ++row.calls;
      if (active[g] == 0) {
        row.host_total_ns += s.host_total_ns();
        row.kernels += s.kernels;
        row.copies += s.copies;
        row.device_busy_ns += s.device_busy_ns;
      }
      row.device_busy_self_ns += s.device_busy_self_ns;
      row.host_self_ns += s.host_self_ns;
      all_self += s.host_self_ns;
      host[g].push_back(s.host_total_ns());
      switch (s.device) {
        case device_status::ok:
          ++row.device_calls;
          if (active[g] == 0) row.device_total_ns += s.device_span_ns();
          row.device_self_ns += s.device_self_ns;
          device[g].push_back(s.device_span_ns());
          break;
        case device_status::captured: ++row.device_captured; break;
        case device_status::invalid: ++row.device_invalid; break;
        default: break;
      }
      ++active[g];
      stack.push_back(g);
    }
    for (std::size_t g = 0; g < groups; ++g) {
      r.flat_[g].host = duration_stats::of(std::move(host[g]));
      r.flat_[g].device = duration_stats::of(std::move(device[g]));
      r.flat_[g].host_time_pct = all_self > 0 ? 100.0 * static_cast<double>(r.flat_[g].host_self_ns) / all_self : 0.0;
    }
    r.flat_.erase(std::remove_if(r.flat_.begin(), r.flat_.end(), [](const flat_row& f) { return f.calls == 0; }),
                  r.flat_.end());
    std::stable_sort(r.flat_.begin(), r.flat_.end(),
                     [](const flat_row& a, const flat_row& b) { return a.host_self_ns > b.host_self_ns; });
  }

  static void build_tree(report& r) {
    // Aggregate instances by path (parent row, name), then lay the rows out depth-first.
    struct node {
      tree_row row;
      std::vector<std::size_t> children;
    };
    std::vector<node> nodes;
    std::vector<std::size_t> roots;
    std::unordered_map<std::string, std::size_t> index;  // key: parent node index + '\0' + name
    std::vector<std::size_t> node_of(r.instances_.size());
    for (std::size_t i = 0; i < r.instances_.size(); ++i) {
      const auto& s = r.instances_[i];
      const std::string& name = s.site < r.sites_.size() ? r.sites_[s.site].name : std::string();
      const std::int64_t parent_node = s.parent < 0 ? -1 : static_cast<std::int64_t>(node_of[static_cast<std::size_t>(s.parent)]);
      std::string key = std::to_string(parent_node);
      key += '\0';
      key += name;
      auto it = index.find(key);
      std::size_t n;
      if (it == index.end()) {
        n = nodes.size();
        nodes.emplace_back();
        nodes[n].row.name = name;
        nodes[n].row.depth = s.depth;
        nodes[n].row.parent = parent_node;
        index.emplace(std::move(key), n);
        if (parent_node < 0) roots.push_back(n);
        else nodes[static_cast<std::size_t>(parent_node)].children.push_back(n);
      } else {
        n = it->second;
      }
      node_of[i] = n;
      tree_row& row = nodes[n].row;
      ++row.calls;
      row.host_total_ns += s.host_total_ns();
      row.host_self_ns += s.host_self_ns;
      row.kernels += s.kernels;
      row.copies += s.copies;
      row.device_busy_ns += s.device_busy_ns;
      row.device_busy_self_ns += s.device_busy_self_ns;
      if (s.device == device_status::ok) {
        ++row.device_calls;
        row.device_total_ns += s.device_span_ns();
        row.device_self_ns += s.device_self_ns;
      }
    }
    const auto heavier = [&](std::size_t a, std::size_t b) { return nodes[a].row.host_total_ns > nodes[b].row.host_total_ns; };
    std::stable_sort(roots.begin(), roots.end(), heavier);
    std::vector<std::pair<std::size_t, std::int64_t>> stack;  // node, parent row in output
    for (auto it = roots.rbegin(); it != roots.rend(); ++it) stack.push_back({*it, -1});
    while (!stack.empty()) {
      const auto [n, parent_row] = stack.back();
      stack.pop_back();
      tree_row row = nodes[n].row;
      row.parent = parent_row;
      const auto out_index = static_cast<std::int64_t>(r.tree_.size());
      r.tree_.push_back(std::move(row));
      auto& ch = nodes[n].children;
      std::stable_sort(ch.begin(), ch.end(), heavier);
      for (auto it = ch.rbegin(); it != ch.rend(); ++it) stack.push_back({*it, out_index});
    }
  }
};

}  // namespace detail

inline report report::from_raw(detail::raw_snapshot raw) { return detail::report_builder::build(std::move(raw)); }

SCOPEPROF_NAMESPACE_END
