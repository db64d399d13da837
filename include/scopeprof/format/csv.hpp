// scopeprof: CSV writer (RFC 4180, UTF-8). One header line with units, then rows of three views:
//   view=meta  name=<counter or evidence key>, value in the "value" column
//   view=flat  one row per scope name
//   view=tree  one row per call path; "row" numbers the tree rows, "parent" points at the parent row
// Device cells are empty where there is no valid device time; device_status says why. The *_med_us,
// *_p90_us and *_p99_us cells are within 1/129 relative (log-bucket histogram); every other cell is exact
// (meta row "quantiles" says so in the file). The last seven columns are the declared work (PROF_SCOPE_WORK,
// add_work) of flat and tree rows and the rates derived from it (work_rate.hpp); empty where none was
// declared, and a rate is empty where it does not exist (work_basis says over what time, or n/a).
#pragma once

#include <scopeprof/detail/process_text.hpp>
#include <scopeprof/detail/sink.hpp>
#include <scopeprof/detail/text.hpp>
#include <scopeprof/report.hpp>
#include <scopeprof/work_rate.hpp>

#include <cmath>
#include <string>

SCOPEPROF_NAMESPACE_BEGIN
namespace detail {

inline std::string csv_us(std::int64_t ns) { return format_ns_as_us(ns); }
inline std::string csv_us(double ns) { return format_fixed(ns / 1000.0, 3); }
/// v / scale with `digits` decimals; empty when v is not finite (a figure that does not exist).
inline std::string csv_number(double v, double scale, int digits) {
  return std::isfinite(v) ? format_fixed(v / scale, digits) : std::string();
}

/// The header line, with the units.
inline void append_csv_header(std::string& out) {
  out +=
      "view,row,parent,depth,name,value,calls,host_total_us,host_self_us,host_avg_us,host_med_us,host_min_us,"
      "host_max_us,host_stddev_us,host_time_pct,device_calls,device_total_us,device_self_us,device_avg_us,"
      "device_med_us,device_min_us,device_max_us,device_stddev_us,host_device_ratio,device_status,device_busy_us,"
      "device_busy_self_us,kernels,copies,cupti_status,kernel_time_pct,host_p90_us,host_p99_us,device_p90_us,"
      "device_p99_us,host_self_avg_us,host_self_med_us,host_self_p99_us,host_self_max_us,device_self_avg_us,"
      "device_self_med_us,device_self_p99_us,device_self_max_us,declared_calls,declared_bytes,declared_flops,"
      "work_basis,achieved_gb_per_s,achieved_tflop_per_s,declared_flop_per_byte,pct_peak_bw_spec,"
      "pct_peak_bw_measured,pct_peak_flops_spec,pct_peak_flops_measured,roofline_bound\r\n";
}

/// The 12 trailing statistics cells (from host_p90_us on), each with its leading comma; the device ones
/// empty without valid device time.
inline void append_csv_tail_stats(std::string& out, const duration_stats& host, const duration_stats& host_self,
                                  const duration_stats& device, const duration_stats& device_self) {
  out += ',' + csv_us(host.p90) + ',' + csv_us(host.p99);
  if (device.count) out += ',' + csv_us(device.p90) + ',' + csv_us(device.p99);
  else out += ",,";
  out += ',' + csv_us(host_self.mean) + ',' + csv_us(host_self.median) + ',' + csv_us(host_self.p99) + ',' +
         csv_us(host_self.max);
  if (device_self.count)
    out += ',' + csv_us(device_self.mean) + ',' + csv_us(device_self.median) + ',' + csv_us(device_self.p99) + ',' +
           csv_us(device_self.max);
  else out += ",,,,";
}

/// Empty trailing cells: the statistics and the declared work.
constexpr const char* csv_empty_tail = ",,,,,,,,,,,,,,,,,,,,,,,,";

/// The twelve declared-work cells, each with its leading comma (empty when the row declared none): the
/// sums, the rates, and where they stand against the device's peaks (empty where no peak is known).
inline void append_csv_work_cells(std::string& out, const declared_work& w, const report& rep) {
  if (!w.any()) {
    out += ",,,,,,,,,,,,";
    return;
  }
  const work_rate r = rate_of(w);
  const auto cell = [](double v, int digits) { return csv_number(v, 1, digits); };
  out += ',' + std::to_string(w.calls) + ',' + cell(w.bytes, 0) + ',' + cell(w.flops, 0) + ',' +
         work_basis_text(r.basis) + ',' + cell(r.bytes_per_s / 1e9, 3) + ',' + cell(r.flops_per_s / 1e12, 6) + ',' +
         cell(r.intensity, 4);
  const work_vs_peak v = against_peak(r, w, rep.peak_of(w.device));
  if (!v.valid) {
    out += ",,,,,";
    return;
  }
  out += ',' + cell(v.pct_bw_spec, 2) + ',' + cell(v.pct_bw_measured, 2) + ',' + cell(v.pct_flops_spec, 2) + ',' +
         cell(v.pct_flops_measured, 2) + ',' + v.bound;
}

/// CUPTI cells: filled where the CUPTI evidence is valid, else empty with cupti_status saying why.
inline void append_csv_cupti_cells(std::string& out, const evidence& sources, std::int64_t busy, std::int64_t busy_self,
                                   std::uint64_t kernels, std::uint64_t copies) {
  if (sources.cupti_valid)
    out += ',' + csv_us(busy) + ',' + csv_us(busy_self) + ',' + std::to_string(kernels) + ',' +
           std::to_string(copies) + ",ok,";
  else
    out += ",,,,," + std::string(cupti_status_text(sources)) + ',';
}

inline void append_csv_meta_row(std::string& out, const char* key, const std::string& value) {
  out += "meta,,,,";
  out += key;
  out += ',';
  append_csv_field(out, value);
  out += ",,,,,,,,,,,,,,,,,,,,,,,,,";
  out += csv_empty_tail;
  out += "\r\n";
}

/// view=meta rows of each device's peaks: device<N>_name, _l2_bytes, _spec_gb_per_s, _spec_tflop_per_s,
/// _measured_gb_per_s, _measured_tflop_per_s (empty where unknown).
inline void append_csv_peak_rows(std::string& out, const report& rep) {
  for (const device_peak& peak : rep.device_peaks()) {
    const std::string d = "device" + std::to_string(peak.device) + "_";
    append_csv_meta_row(out, (d + "name").c_str(), peak.name);
    append_csv_meta_row(out, (d + "l2_bytes").c_str(), std::to_string(peak.l2_bytes));
    append_csv_meta_row(out, (d + "spec_gb_per_s").c_str(), csv_number(peak.spec_bytes_per_s, 1e9, 1));
    append_csv_meta_row(out, (d + "spec_tflop_per_s").c_str(), csv_number(peak.spec_flops_per_s, 1e12, 3));
    append_csv_meta_row(out, (d + "measured_gb_per_s").c_str(), csv_number(peak.measured_bytes_per_s, 1e9, 1));
    append_csv_meta_row(out, (d + "measured_tflop_per_s").c_str(), csv_number(peak.measured_flops_per_s, 1e12, 3));
  }
}

/// view=meta: the counts and the evidence.
inline void append_csv_meta_rows(std::string& out, const report& rep) {
  append_csv_meta_row(out, "entered", std::to_string(rep.counts().entered));
  append_csv_meta_row(out, "recorded", std::to_string(rep.counts().recorded));
  append_csv_meta_row(out, "dropped", std::to_string(rep.counts().dropped));
  append_csv_meta_row(out, "in_flight", std::to_string(rep.counts().in_flight));
  const process_desc& p = rep.process();
  append_csv_meta_row(out, "rank", std::to_string(p.rank));
  append_csv_meta_row(out, "world_size", std::to_string(p.world_size));
  append_csv_meta_row(out, "local_rank", std::to_string(p.local_rank));
  append_csv_meta_row(out, "rank_source", p.rank_source);
  append_csv_meta_row(out, "host", p.host);
  append_csv_meta_row(out, "program", p.program);
  append_csv_meta_row(out, "pid", std::to_string(p.pid));
  append_csv_meta_row(out, "base_unix_ns", p.base_unix_ns != 0 ? std::to_string(p.base_unix_ns) : std::string());
  std::string devices;
  for (std::size_t i = 0; i < p.devices.size(); ++i) devices += (i ? " " : "") + std::to_string(p.devices[i]);
  append_csv_meta_row(out, "devices", devices);
  append_csv_meta_row(out, "host_source", rep.sources().host);
  append_csv_meta_row(out, "device_source", rep.sources().device);
  append_csv_meta_row(out, "cupti_source", rep.sources().cupti);
  append_csv_meta_row(out, "torch_source", rep.sources().torch);
  const step_summary& steps = rep.step_stats();
  if (steps.marks || steps.lost) {
    append_csv_meta_row(out, "steps_complete", std::to_string(steps.complete));
    append_csv_meta_row(out, "steps_lost", std::to_string(steps.lost));
    append_csv_meta_row(out, "steps_cut", std::to_string(steps.cut));
    if (steps.complete) {
      append_csv_meta_row(out, "step_host_avg_us", csv_us(steps.host.mean));
      append_csv_meta_row(out, "step_host_med_us", csv_us(steps.host.median));
      append_csv_meta_row(out, "step_host_p90_us", csv_us(steps.host.p90));
      append_csv_meta_row(out, "step_host_p99_us", csv_us(steps.host.p99));
      append_csv_meta_row(out, "step_host_min_us", csv_us(steps.host.min));
      append_csv_meta_row(out, "step_host_max_us", csv_us(steps.host.max));
    }
  }
  const work_counts& w = rep.work();
  if (w.any()) {
    append_csv_meta_row(out, "work_declared", std::to_string(w.declared));
    append_csv_meta_row(out, "work_no_scope", std::to_string(w.no_scope));
    append_csv_meta_row(out, "work_lost", std::to_string(w.lost));
    append_csv_meta_row(out, "work_rejected", std::to_string(w.rejected));
    append_csv_meta_row(out, "work_pending", std::to_string(w.pending));
  }
  append_csv_peak_rows(out, rep);
  append_csv_meta_row(out, "quantiles",
                      "*_med_us, *_p90_us and *_p99_us are within 1/129 relative (log-bucket histogram); every other "
                      "figure is exact");
}

/// view=flat: row `i` of the flat table.
inline void append_csv_flat_row(std::string& out, const flat_row& f, std::size_t i, const report& rep) {
  const evidence& sources = rep.sources();
  out += "flat,";
  out += std::to_string(i);
  out += ",,,";
  append_csv_field(out, f.name);
  out += ",,";
  out += std::to_string(f.calls) + ',' + csv_us(f.host_total_ns) + ',' + csv_us(f.host_self_ns) + ',' +
         csv_us(f.host.mean) + ',' + csv_us(f.host.median) + ',' + csv_us(f.host.min) + ',' + csv_us(f.host.max) +
         ',' + csv_us(f.host.stddev) + ',' + format_fixed(f.host_time_pct, 3) + ',' + std::to_string(f.device_calls) +
         ',';
  if (f.device_calls) {
    out += csv_us(f.device_total_ns) + ',' + csv_us(f.device_self_ns) + ',' + csv_us(f.device.mean) + ',' +
           csv_us(f.device.median) + ',' + csv_us(f.device.min) + ',' + csv_us(f.device.max) + ',' +
           csv_us(f.device.stddev) + ',' +
           (f.device_total_ns > 0 ? format_fixed(static_cast<double>(f.host_total_ns) / f.device_total_ns, 4) : "") +
           ",ok";
  } else {
    out += ",,,,,,,,";
    out += device_status_text(0, f.device_captured, f.device_invalid);
  }
  append_csv_cupti_cells(out, sources, f.device_busy_ns, f.device_busy_self_ns, f.kernels, f.copies);
  append_csv_tail_stats(out, f.host, f.host_self, f.device, f.device_self);
  append_csv_work_cells(out, f.work, rep);
  out += "\r\n";
}

/// view=tree: row `i` of the tree table.
inline void append_csv_tree_row(std::string& out, const tree_row& t, std::size_t i, const report& rep) {
  const evidence& sources = rep.sources();
  out += "tree," + std::to_string(i) + ',' + (t.parent < 0 ? std::string() : std::to_string(t.parent)) + ',' +
         std::to_string(t.depth) + ',';
  append_csv_field(out, t.name);
  out += ",," + std::to_string(t.calls) + ',' + csv_us(t.host_total_ns) + ',' + csv_us(t.host_self_ns) + ',' +
         csv_us(t.host.mean) + ',' + csv_us(t.host.median) + ',' + csv_us(t.host.min) + ',' + csv_us(t.host.max) +
         ',' + csv_us(t.host.stddev) + ",," + std::to_string(t.device_calls) + ',';
  if (t.device_calls) {
    out += csv_us(t.device_total_ns) + ',' + csv_us(t.device_self_ns) + ',' + csv_us(t.device.mean) + ',' +
           csv_us(t.device.median) + ',' + csv_us(t.device.min) + ',' + csv_us(t.device.max) + ',' +
           csv_us(t.device.stddev) + ',' +
           (t.device_total_ns > 0 ? format_fixed(static_cast<double>(t.host_total_ns) / t.device_total_ns, 4) : "") +
           ",ok";
  } else {
    out += ",,,,,,,,n/a";
  }
  append_csv_cupti_cells(out, sources, t.device_busy_ns, t.device_busy_self_ns, t.kernels, t.copies);
  append_csv_tail_stats(out, t.host, t.host_self, t.device, t.device_self);
  append_csv_work_cells(out, t.work, rep);
  out += "\r\n";
}

/// view=kernel: name = kernel, value = scope, calls = instances, device_* = per-instance statistics.
inline void append_csv_kernel_row(std::string& out, const kernel_summary_row& k, std::size_t i) {
  out += "kernel," + std::to_string(i) + ",,,";
  append_csv_field(out, k.kernel);
  out += ',';
  append_csv_field(out, k.scope);
  out += ',' + std::to_string(k.time.count) + ",,,,,,,,,," + csv_us(k.time.sum) + ",," + csv_us(k.time.mean) + ',' +
         csv_us(k.time.median) + ',' + csv_us(k.time.min) + ',' + csv_us(k.time.max) + ',' + csv_us(k.time.stddev) +
         ",,ok,,,,,ok," + format_fixed(k.time_pct, 3) + ",,," + csv_us(k.time.p90) + ',' + csv_us(k.time.p99) +
         ",,,,,,,,,,,,,,,,,,,,\r\n";
}

/// The csv report of `rep`, streamed into `sink`.
inline void serialize_csv(const report& rep, output_sink& sink) {
  std::string& out = sink.text();
  append_csv_header(out);
  append_csv_meta_rows(out, rep);
  for (std::size_t i = 0; i < rep.flat().size(); ++i) {
    sink.row_done();
    append_csv_flat_row(out, rep.flat()[i], i, rep);
  }
  for (std::size_t i = 0; i < rep.tree().size(); ++i) {
    sink.row_done();
    append_csv_tree_row(out, rep.tree()[i], i, rep);
  }
  for (std::size_t i = 0; i < rep.kernel_summary().size(); ++i) {
    sink.row_done();
    append_csv_kernel_row(out, rep.kernel_summary()[i], i);
  }
  sink.flush();
}

}  // namespace detail
SCOPEPROF_NAMESPACE_END
