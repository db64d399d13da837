// scopeprof: CSV writer (RFC 4180, UTF-8). One header line with units, then rows of three views:
//   view=meta  name=<counter or evidence key>, value in the "value" column
//   view=flat  one row per scope name
//   view=tree  one row per call path; "row" numbers the tree rows, "parent" points at the parent row
// Device cells are empty where there is no valid device time; device_status says why.
#pragma once

#include <scopeprof/detail/sink.hpp>
#include <scopeprof/detail/text.hpp>
#include <scopeprof/report.hpp>

#include <string>

SCOPEPROF_NAMESPACE_BEGIN
namespace detail {

inline std::string csv_us(std::int64_t ns) { return format_ns_as_us(ns); }
inline std::string csv_us(double ns) { return format_fixed(ns / 1000.0, 3); }

/// The csv report of `rep`, streamed into `sink`.
inline void serialize_csv(const report& rep, output_sink& sink) {
  std::string& out = sink.text();
  out +=
      "view,row,parent,depth,name,value,calls,host_total_us,host_self_us,host_avg_us,host_med_us,host_min_us,"
      "host_max_us,host_stddev_us,host_time_pct,device_calls,device_total_us,device_self_us,device_avg_us,"
      "device_med_us,device_min_us,device_max_us,device_stddev_us,host_device_ratio,device_status,device_busy_us,"
      "device_busy_self_us,kernels,copies,cupti_status,kernel_time_pct\r\n";
  // CUPTI cells: filled where the CUPTI evidence is valid, else empty with cupti_status saying why.
  const bool cupti = rep.sources().cupti_valid;
  const auto cupti_cells = [&](std::int64_t busy, std::int64_t busy_self, std::uint64_t kernels, std::uint64_t copies) {
    if (cupti)
      out += ',' + csv_us(busy) + ',' + csv_us(busy_self) + ',' + std::to_string(kernels) + ',' +
             std::to_string(copies) + ",ok,";
    else
      out += ",,,,," + std::string(cupti_status_text(rep.sources())) + ',';
  };
  const auto meta = [&](const char* key, const std::string& value) {
    out += "meta,,,,";
    out += key;
    out += ',';
    append_csv_field(out, value);
    out += ",,,,,,,,,,,,,,,,,,,,,,,,,\r\n";
  };
  meta("entered", std::to_string(rep.counts().entered));
  meta("recorded", std::to_string(rep.counts().recorded));
  meta("dropped", std::to_string(rep.counts().dropped));
  meta("in_flight", std::to_string(rep.counts().in_flight));
  meta("host_source", rep.sources().host);
  meta("device_source", rep.sources().device);
  meta("cupti_source", rep.sources().cupti);
  meta("torch_source", rep.sources().torch);
  std::size_t i = 0;
  for (const auto& f : rep.flat()) {
    sink.row_done();
    out += "flat,";
    out += std::to_string(i++);
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
    cupti_cells(f.device_busy_ns, f.device_busy_self_ns, f.kernels, f.copies);
    out += "\r\n";
  }
  i = 0;
  for (const auto& t : rep.tree()) {
    sink.row_done();
    out += "tree," + std::to_string(i++) + ',' + (t.parent < 0 ? std::string() : std::to_string(t.parent)) + ',' +
           std::to_string(t.depth) + ',';
    append_csv_field(out, t.name);
    out += ",," + std::to_string(t.calls) + ',' + csv_us(t.host_total_ns) + ',' + csv_us(t.host_self_ns) +
           ",,,,,,," + std::to_string(t.device_calls) + ',';
    if (t.device_calls) {
      out += csv_us(t.device_total_ns) + ',' + csv_us(t.device_self_ns) + ",,,,,," +
             (t.device_total_ns > 0 ? format_fixed(static_cast<double>(t.host_total_ns) / t.device_total_ns, 4) : "") +
             ",ok";
    } else {
      out += ",,,,,,,,n/a";
    }
    cupti_cells(t.device_busy_ns, t.device_busy_self_ns, t.kernels, t.copies);
    out += "\r\n";
  }
  // Kernel summary: name = kernel, value = scope, calls = instances, device_* = per-instance statistics.
  i = 0;
  for (const auto& k : rep.kernel_summary()) {
    sink.row_done();
    out += "kernel," + std::to_string(i++) + ",,,";
    append_csv_field(out, k.kernel);
    out += ',';
    append_csv_field(out, k.scope);
    out += ',' + std::to_string(k.time.count) + ",,,,,,,,,," + csv_us(k.time.sum) + ",," + csv_us(k.time.mean) + ',' +
           csv_us(k.time.median) + ',' + csv_us(k.time.min) + ',' + csv_us(k.time.max) + ',' + csv_us(k.time.stddev) +
           ",,ok,,,,,ok," + format_fixed(k.time_pct, 3) + "\r\n";
  }
  sink.flush();
}


}  // namespace detail
SCOPEPROF_NAMESPACE_END
