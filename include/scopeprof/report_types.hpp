// scopeprof: the report's value types: counts, instances, rows, statistics, evidence and the writers'
// result. Plain data; the report class (report.hpp) holds them.
#pragma once

#include <scopeprof/config.hpp>
#include <scopeprof/declared_work.hpp>
#include <scopeprof/device_peak.hpp>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

SCOPEPROF_NAMESPACE_BEGIN

/// @brief Accounting of scope entries: entered == recorded + dropped + in_flight, always.
struct scope_counts {
  std::uint64_t entered = 0;    ///< scopes begun since start (or the last reset)
  std::uint64_t recorded = 0;   ///< finished scopes counted in this report's tables
  std::uint64_t dropped = 0;    ///< finished scopes that found the record buffer full (see set_max_records)
  std::uint64_t in_flight = 0;  ///< scopes still open when the report was taken
};

/// @brief What the timeline (SCOPEPROF_TRACE) kept of the recorded scopes: kept + left_out == recorded
/// when the report comes from collect(). The tables count every recorded scope; instances(), traces and
/// the HTML timeline hold the kept ones.
struct timeline_counts {
  std::string policy = "all";  ///< as set: all, off, last:N, steps:A-B
  std::uint64_t kept = 0;      ///< scopes in instances()
  std::uint64_t left_out = 0;  ///< recorded scopes in the tables only
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
  // Members are ordered by size, largest first, so the struct carries no padding (128 bytes).
  std::int64_t parent = -1;   ///< index into report::instances(), -1 for a root
  std::int64_t host_begin_ns = 0;
  std::int64_t host_end_ns = 0;
  std::int64_t host_self_ns = 0;  ///< host total minus the host totals of its children
  std::uint64_t stream = 0;  ///< the CUDA stream handle the span was timed on
  std::int64_t device_begin_ns = 0;
  std::int64_t device_end_ns = 0;
  std::int64_t device_self_ns = 0;  ///< span minus the union of child spans on the same stream
  // CUPTI (valid when sources().cupti_valid): work launched inside the scope, its children included.
  std::int64_t device_busy_ns = 0;       ///< sum of the durations of those kernels and copies
  std::int64_t device_busy_self_ns = 0;  ///< the same for the work this scope launched directly
  // Declared work (PROF_SCOPE_WORK, add_work): the program's claim, summed over its declarations.
  double work_bytes = 0;
  double work_flops = 0;
  std::uint32_t site = 0;     ///< index into report::sites()
  std::uint32_t thread = 0;   ///< index into report::threads()
  std::uint32_t depth = 0;    ///< depth in the reconstructed tree (0 = root)
  std::int32_t device_id = -1;
  std::uint32_t kernels = 0;             ///< CUPTI: kernels launched inside the scope (children included)
  std::uint32_t kernels_self = 0;        ///< CUPTI: kernels whose innermost launching scope is this one
  std::uint32_t copies = 0;              ///< CUPTI: memcpy and memset operations (children included)
  device_status device = device_status::not_timed;
  bool orphan = false;        ///< its parent was still open (or dropped) when the report was taken
  bool has_work = false;      ///< declared work: work_bytes and work_flops hold its sums

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
  std::uint32_t correlation = 0;  ///< CUPTI correlation id of the API call that launched it (0: unknown)
  /// The runtime or driver API call that launched it (cudaLaunchKernel, cudaMemcpyAsync, cudaGraphLaunch...),
  /// where CUPTI recorded it: the name's index into report::activity_names(), the OS thread id and the
  /// call's host interval. launch_name == no_launch when there is no such record.
  static constexpr std::uint32_t no_launch = 0xFFFFFFFFu;
  std::uint32_t launch_name = no_launch;
  bool launch_driver = false;  ///< the launch was a driver API call (cuLaunchKernel...), else runtime
  std::uint64_t launch_thread = 0;
  std::int64_t launch_begin_ns = 0;
  std::int64_t launch_end_ns = 0;
  std::int64_t duration_ns() const noexcept { return end_ns - begin_ns; }
  bool has_launch() const noexcept { return launch_name != no_launch; }
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

/// @brief Summary of a set of durations (nanoseconds), read from a streaming distribution in constant
/// memory. count, sum, min and max are exact; mean and stddev (population) are exact up to double
/// rounding; median, p90 and p99 are nearest-rank quantiles within 1/129 (< 0.8%) relative of the true
/// value (a log-bucket histogram), clamped to [min, max].
struct duration_stats {
  std::uint64_t count = 0;
  std::int64_t sum = 0;
  std::int64_t min = 0;
  std::int64_t max = 0;
  double mean = 0;
  double median = 0;  ///< p50, within 1/129 relative
  double stddev = 0;
  double p90 = 0;     ///< within 1/129 relative
  double p99 = 0;     ///< within 1/129 relative

  /// Statistics of these values, computed as the report computes them (the same bounds).
  static duration_stats of(std::vector<std::int64_t> values);
};

/// @brief One bucket of a duration histogram: `count` values in [lower_ns, upper_ns] (both inclusive).
/// Buckets are those of the statistics' log histogram (64 per power of two above 128 ns, one per value
/// below), so a bucket is at most 1/64 of its lower bound wide. Host figures kept in clock ticks shorter
/// than 1 ns are converted bucket by bucket, to within 1 ns; buckets that round to the same nanosecond
/// are joined into one, so the buckets of a row never overlap.
struct histogram_bin {
  std::int64_t lower_ns = 0;
  std::int64_t upper_ns = 0;
  std::uint64_t count = 0;
};

/// @brief What became of the work declared in a report's run: every add_work() call and PROF_SCOPE_WORK
/// entry lands in exactly one of these.
struct work_counts {
  std::uint64_t declared = 0;  ///< declarations added to a recorded scope (several may add to one scope)
  std::uint64_t no_scope = 0;  ///< add_work() with no scope open on the calling thread (or not recording)
  std::uint64_t lost = 0;      ///< their scope was not recorded (dropped, ended on another thread), or no memory
  std::uint64_t rejected = 0;  ///< negative, NaN or infinite bytes or FLOPs: never added
  std::uint64_t pending = 0;   ///< their scope was still open when the report was taken
  bool any() const noexcept { return declared || no_scope || lost || rejected || pending; }
};

/// @brief One row of the flat table: every instance with this name, on every thread.
struct flat_row {
  std::string name;
  std::uint64_t calls = 0;
  /// Inclusive host time, counting an instance nested in another of the same name only once.
  std::int64_t host_total_ns = 0;
  std::int64_t host_self_ns = 0;
  duration_stats host;       ///< over every instance's inclusive host time
  duration_stats host_self;  ///< over every instance's host self time
  double host_time_pct = 0;  ///< this row's host self time as a share of all host self time
  std::uint64_t device_calls = 0;  ///< instances with a valid device span
  std::int64_t device_total_ns = 0;
  std::int64_t device_self_ns = 0;
  duration_stats device;       ///< over every valid instance's device span
  duration_stats device_self;  ///< over every valid instance's device self time
  std::vector<histogram_bin> host_histogram;    ///< non-empty buckets of the host totals, ascending
  std::vector<histogram_bin> device_histogram;  ///< non-empty buckets of the device spans, ascending
  std::uint64_t device_captured = 0;  ///< instances whose device time is "n/a (captured)"
  std::uint64_t device_invalid = 0;
  std::uint64_t kernels = 0;            ///< CUPTI: kernels launched inside these scopes (children included)
  std::uint64_t copies = 0;             ///< CUPTI: memcpy and memset operations (children included)
  std::int64_t device_busy_ns = 0;      ///< CUPTI: their summed durations, a name nested in itself counted once
  std::int64_t device_busy_self_ns = 0; ///< CUPTI: the same for the work launched directly by these scopes
  declared_work work;                   ///< declared bytes and FLOPs of these scopes (every instance)
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
  duration_stats host;         ///< over this path's instances' host totals
  duration_stats host_self;    ///< ... host self times
  duration_stats device;       ///< ... device spans (valid instances)
  duration_stats device_self;  ///< ... device self times (valid instances)
  declared_work work;          ///< declared bytes and FLOPs of this path's instances
};

/// @brief One complete step: from a next_step() call to the next (ProfilerStep#index in traces).
struct step_span {
  std::uint64_t index = 0;    ///< the process-wide number of the next_step() call that began it
  std::uint32_t thread = 0;   ///< index into report::threads() of the thread that began it
  std::int64_t begin_ns = 0;  ///< steady_clock ns, as scope_instance
  std::int64_t end_ns = 0;
  bool cuts_scopes = false;   ///< a boundary of it fell inside open scopes
  std::int64_t duration_ns() const noexcept { return end_ns - begin_ns; }
};

/// @brief The steps of a report: how many, and the distribution of host time per step.
struct step_summary {
  std::uint64_t complete = 0;   ///< steps with both boundaries recorded
  std::uint64_t marks = 0;      ///< next_step() calls in the report (a step under way has one)
  std::uint64_t lost = 0;       ///< next_step() calls not recorded (out of memory): steps across them are left out
  std::uint64_t cut = 0;        ///< complete steps with a boundary inside open scopes
  duration_stats host;          ///< host (wall) time per complete step
  std::vector<histogram_bin> host_histogram;
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

/// @brief Which process of a job the report comes from: every output carries it, so reports of several
/// ranks can be told apart and merged, and their timelines lined up by the wall clock.
struct process_desc {
  std::int64_t rank = 0;        ///< from the launcher's environment or set_rank(); 0 when single
  std::int64_t world_size = 1;  ///< number of ranks; 1 when single
  std::int64_t local_rank = 0;  ///< rank among the processes of this host
  std::string rank_source;      ///< the variable the rank came from, "set_rank()", or empty when none was set
  std::string host;             ///< the host name
  std::string program;          ///< the executable's file name (no directory), "" when unknown
  std::int64_t pid = 0;
  std::int64_t base_unix_ns = 0;      ///< Unix time (CLOCK_REALTIME, ns) of the trace origin; 0 when unknown
  std::vector<std::int32_t> devices;  ///< CUDA devices this process timed on (ascending)
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

SCOPEPROF_NAMESPACE_END
