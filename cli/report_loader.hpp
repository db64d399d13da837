// scopeprof tool: the one writer of a report's fields outside the library (report's friend): a report
// from the JSON the library's writer wrote (docs/formats.md, "JSON"), or from the process and call tree
// alone (the merge's streaming reader).
#pragma once

#include "json_fields.hpp"

#include <scopeprof.hpp>

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

SCOPEPROF_NAMESPACE_BEGIN
namespace detail {

class report_loader {
 public:
  using json = nlohmann::json;
  using fields = scopeprof_cli::json_fields;

  /// Only the process and the call tree: what the merge reads.
  static report with_tree(process_desc process, std::vector<tree_row> tree) {
    report r;
    r.process_ = std::move(process);
    r.tree_ = std::move(tree);
    return r;
  }

  /// Why a "device" object with 0 calls is refused (both readers say it): the writer gives a row with no
  /// valid device span "device": null, and every device figure comes with a call, so such an object is none
  /// a run wrote, and its figures would not survive a write (null reads back as 0).
  static constexpr const char* zero_device_calls =
      "0 in a device object (a row with no valid device span has \"device\": null)";
  /// Rules both readers apply to what they both read, in the same words.
  static constexpr const char* negative_duration = "expected a duration, found a negative number";
  static constexpr const char* not_a_device_id = "expected a device id";
  /// A declared-work device id a run writes: -1 none, -2 several, else a device's ordinal.
  static constexpr bool is_device_id(std::int64_t v) { return v >= -2 && v <= INT32_MAX; }

  static report load(const json& doc, const std::string& source_name) {
    report r;
    fields f(doc, "");
    f.require_object();
    r.process_ = read_process(f.object("process"));
    r.counts_ = read_counts(f.object("counts"));
    read_timeline(f.object("timeline"), r);
    r.orphans_ = f.u64("orphans");
    if (f.has("work")) r.work_ = read_work_counts(f.object("work"));  // reports before declared work lack it
    if (f.has("device_peaks"))
      for (const fields& p : f.array("device_peaks")) r.peaks_.push_back(read_peak(p));
    r.sources_ = read_evidence(f.object("evidence"));
    r.warnings_ = f.text("warnings");
    const std::string note = "re-read from " + source_name + ", which holds the tables but no timeline";
    r.warnings_ += r.warnings_.empty() ? note : "; " + note;
    for (const fields& t : f.array("threads")) r.threads_.push_back(read_thread(t));
    for (const fields& row : f.array("flat")) r.flat_.push_back(read_flat_row(row));
    for (const fields& row : f.array("tree")) r.tree_.push_back(read_tree_row(row, r.tree_.size()));
    for (const fields& row : f.array("kernel_summary")) r.kernel_summary_.push_back(read_kernel_row(row));
    r.step_stats_ = read_steps(f.object("steps"));
    return r;
  }

 private:
  static process_desc read_process(const fields& f) {
    process_desc p;
    p.rank = f.i64("rank");
    p.world_size = f.i64("world_size");
    p.local_rank = f.i64("local_rank");
    if (p.world_size < 1 || p.rank < 0 || p.rank >= p.world_size)
      f.fail("rank " + std::to_string(p.rank) + " of world size " + std::to_string(p.world_size) + " is impossible");
    p.rank_source = f.text("rank_source");
    p.host = f.text("host");
    p.program = f.text_or("program", "");  // reports of 0.1.0 before the field existed
    p.pid = f.i64("pid");
    p.base_unix_ns = f.i64_or_null("base_unix_ns", 0);
    for (const fields& d : f.array("devices")) p.devices.push_back(static_cast<std::int32_t>(d.as_i64()));
    return p;
  }

  static scope_counts read_counts(const fields& f) {
    scope_counts c;
    c.entered = f.u64("entered");
    c.recorded = f.u64("recorded");
    c.dropped = f.u64("dropped");
    c.in_flight = f.u64("in_flight");
    return c;
  }

  /// The tables count every recorded scope; the re-read report keeps no instance, so its timeline is empty
  /// whatever the run kept (the policy stays as it was, for the header).
  static void read_timeline(const fields& f, report& r) {
    r.timeline_.policy = f.text("policy");
    r.timeline_.kept = 0;
    r.timeline_.left_out = r.counts_.recorded;
  }

  /// A double field that may be null (an unknown peak).
  static double number_or_nan(const fields& f, const char* key) {
    const fields v = f.field(key);
    return v.is_null() ? std::nan("") : v.as_number();
  }

  static device_peak read_peak(const fields& f) {
    device_peak p;
    p.device = static_cast<std::int32_t>(f.i64("device"));
    p.name = f.text("name");
    p.cc_major = static_cast<int>(f.i64("cc_major"));
    p.cc_minor = static_cast<int>(f.i64("cc_minor"));
    p.sm_count = static_cast<int>(f.i64("sm_count"));
    p.sm_clock_hz = f.number("sm_clock_hz");
    p.memory_clock_hz = f.number("memory_clock_hz");
    p.bus_width_bits = static_cast<int>(f.i64("bus_width_bits"));
    p.l2_bytes = f.i64("l2_bytes");
    p.spec_bytes_per_s = number_or_nan(f, "spec_bytes_per_s");
    p.spec_flops_per_s = number_or_nan(f, "spec_flops_per_s");
    p.measured_bytes_per_s = number_or_nan(f, "measured_bytes_per_s");
    p.measured_flops_per_s = number_or_nan(f, "measured_flops_per_s");
    p.measured_note = f.text("measured_note");
    if (p.device < 0) f.fail("device " + std::to_string(p.device) + " is not a device id");
    return p;
  }

  static work_counts read_work_counts(const fields& f) {
    work_counts w;
    w.declared = f.u64("declared");
    w.no_scope = f.u64("no_scope");
    w.lost = f.u64("lost");
    w.rejected = f.u64("rejected");
    w.pending = f.u64("pending");
    return w;
  }

  /// A row's "work" object (absent in reports before declared work, null where the row declared none). The
  /// rates in it are derived (work_rate.hpp) and are derived again from the sums.
  static declared_work read_work(const fields& row) {
    declared_work w;
    if (!row.has("work")) return w;
    const fields f = row.object_or_null("work");
    if (f.is_null()) return w;
    w.calls = f.u64("calls");
    w.bytes = f.number("bytes");
    w.flops = f.number("flops");
    w.device_calls = f.u64("device_calls");
    w.device_bytes = f.number("device_bytes");
    w.device_flops = f.number("device_flops");
    w.device_ns = f.i64("device_span");
    const std::int64_t device = f.i64("device_id");
    if (!is_device_id(device)) f.field("device_id").fail(not_a_device_id);
    w.device = static_cast<std::int32_t>(device);
    w.host_calls = f.u64("host_calls");
    w.host_bytes = f.number("host_bytes");
    w.host_flops = f.number("host_flops");
    w.host_ns = f.i64("host");
    w.unmeasured = f.u64("unmeasured");
    const auto non_negative = [](double v) { return v >= 0; };
    if (w.calls == 0 || w.device_calls + w.host_calls + w.unmeasured != w.calls || !non_negative(w.bytes) ||
        !non_negative(w.flops) || !non_negative(w.device_bytes) || !non_negative(w.device_flops) ||
        !non_negative(w.host_bytes) || !non_negative(w.host_flops) || w.device_ns < 0 || w.host_ns < 0)
      f.fail("declared work that no run can produce (its calls do not add up, or a quantity is negative)");
    return w;
  }

  static evidence read_evidence(const fields& f) {
    evidence e;
    e.host = f.text("host");
    e.device = f.text("device");
    e.device_valid = f.boolean("device_valid");
    e.cupti = f.text("cupti");
    e.cupti_valid = f.boolean("cupti_valid");
    e.torch = f.text("torch");
    return e;
  }

  static thread_desc read_thread(const fields& f) {
    thread_desc t;
    t.index = static_cast<std::uint32_t>(f.u64("index"));
    t.os_id = f.u64("os_id");
    t.name = f.text("name");
    t.exited = f.boolean("exited");
    t.counts = read_counts(f.object("counts"));
    return t;
  }

  /// avg, median, p90, p99, min, max, stddev (and count and sum where the object has them).
  static duration_stats read_stats(const fields& f, std::uint64_t count, std::int64_t sum) {
    duration_stats s;
    s.count = f.has("count") ? f.u64("count") : count;
    s.sum = f.has("sum") ? f.i64("sum") : sum;
    s.mean = f.number("avg");
    s.median = f.number("median");
    s.p90 = f.number("p90");
    s.p99 = f.number("p99");
    s.min = f.i64("min");
    s.max = f.i64("max");
    s.stddev = f.number("stddev");
    return s;
  }

  static std::vector<histogram_bin> read_histogram(const fields& f) {
    std::vector<histogram_bin> bins;
    for (const fields& b : f.array("histogram")) {
      const std::vector<fields> v = b.items(3);
      histogram_bin bin{v[0].as_i64(), v[1].as_i64(), v[2].as_u64()};
      if (bin.upper_ns < bin.lower_ns || (!bins.empty() && bin.lower_ns <= bins.back().upper_ns))
        b.fail("buckets must be ascending and not overlap");
      bins.push_back(bin);
    }
    return bins;
  }

  static void read_cupti(const fields& f, std::int64_t& busy, std::int64_t& busy_self, std::uint64_t& kernels,
                         std::uint64_t& copies) {
    if (f.is_null()) return;
    busy = f.i64("busy");
    busy_self = f.i64("busy_self");
    kernels = f.u64("kernels");
    copies = f.u64("copies");
  }

  static flat_row read_flat_row(const fields& f) {
    flat_row r;
    r.name = f.text("name");
    r.calls = f.u64("calls");
    const fields host = f.object("host");
    r.host_total_ns = duration(host, "total");
    r.host_self_ns = duration(host, "self");
    r.host = read_stats(host, r.calls, r.host_total_ns);
    r.host_histogram = read_histogram(host);
    r.host_self = read_stats(host.object("self_stats"), r.calls, r.host_self_ns);
    r.host_time_pct = host.number("time_pct");
    const fields device = f.object_or_null("device");
    if (!device.is_null()) {
      r.device_calls = read_device_calls(device);
      r.device_total_ns = duration(device, "total");
      r.device_self_ns = device.i64("self");
      r.device = read_stats(device, r.device_calls, r.device_total_ns);
      r.device_histogram = read_histogram(device);
      r.device_self = read_stats(device.object("self_stats"), r.device_calls, r.device_self_ns);
      r.device_captured = device.u64("captured");
      r.device_invalid = device.u64("invalid");
    } else {
      read_device_status(f, r);
    }
    read_cupti(f.object_or_null("cupti"), r.device_busy_ns, r.device_busy_self_ns, r.kernels, r.copies);
    r.work = read_work(f);
    return r;
  }

  /// A row's host total or self, or its device total: never negative in a report a run wrote (the merge's
  /// tree reader refuses one in the same words).
  static std::int64_t duration(const fields& f, const char* key) {
    const std::int64_t v = f.i64(key);
    if (v < 0) f.field(key).fail(negative_duration);
    return v;
  }

  /// A row's device calls: at least 1 where the row has a device object (zero_device_calls).
  static std::uint64_t read_device_calls(const fields& device) {
    const std::uint64_t calls = device.u64("calls");
    if (calls == 0) device.field("calls").fail(zero_device_calls);
    return calls;
  }

  /// A row without device spans says why in device_status; the counts behind it are not saved, so one
  /// instance stands for the reason (the writers print the reason, not the count).
  static void read_device_status(const fields& f, flat_row& r) {
    const std::string status = f.text("device_status");
    if (status == "n/a (captured)") r.device_captured = 1;
    else if (status == "n/a (CUDA error)") r.device_invalid = 1;
    else if (status != "n/a") f.fail("device_status \"" + status + "\" with no device object");
  }

  static tree_row read_tree_row(const fields& f, std::size_t index) {
    tree_row r;
    r.name = f.text("name");
    const std::uint64_t depth = f.u64("depth");
    if (depth > UINT32_MAX) f.field("depth").fail("integer out of range");
    r.depth = static_cast<std::uint32_t>(depth);
    r.parent = f.i64("parent");
    if (r.parent < -1 || r.parent >= static_cast<std::int64_t>(index))
      f.fail("parent " + std::to_string(r.parent) + " is not an earlier row");
    r.calls = f.u64("calls");
    const fields host = f.object("host");
    r.host_total_ns = duration(host, "total");
    r.host_self_ns = duration(host, "self");
    r.host = read_stats(host, r.calls, r.host_total_ns);
    r.host_self = read_stats(host.object("self_stats"), r.calls, r.host_self_ns);
    const fields device = f.object_or_null("device");
    if (!device.is_null()) {
      r.device_calls = read_device_calls(device);
      r.device_total_ns = duration(device, "total");
      r.device_self_ns = device.i64("self");
      r.device = read_stats(device, r.device_calls, r.device_total_ns);
      r.device_self = read_stats(device.object("self_stats"), r.device_calls, r.device_self_ns);
    }
    read_cupti(f.object_or_null("cupti"), r.device_busy_ns, r.device_busy_self_ns, r.kernels, r.copies);
    r.work = read_work(f);
    return r;
  }

  static kernel_summary_row read_kernel_row(const fields& f) {
    kernel_summary_row k;
    k.scope = f.text("scope");
    k.kernel = f.text("name");
    k.mangled = f.text("mangled");
    k.time = read_stats(f, f.u64("instances"), f.i64("total"));
    k.time_pct = f.number("time_pct");
    return k;
  }

  static step_summary read_steps(const fields& f) {
    step_summary s;
    s.complete = f.u64("complete");
    s.marks = f.u64("marks");
    s.lost = f.u64("lost");
    s.cut = f.u64("cut");
    const fields host = f.object("host");
    s.host = read_stats(host, 0, 0);
    s.host_histogram = read_histogram(host);
    return s;
  }
};

}  // namespace detail
SCOPEPROF_NAMESPACE_END
