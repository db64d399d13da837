// scopeprof: JSON writer. Schema "scopeprof-report/1" (docs/formats.md); all times are nanoseconds.
#pragma once

#include <scopeprof/detail/process_text.hpp>
#include <scopeprof/detail/sink.hpp>
#include <scopeprof/detail/text.hpp>
#include <scopeprof/report.hpp>
#include <scopeprof/version.hpp>
#include <scopeprof/work_rate.hpp>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

SCOPEPROF_NAMESPACE_BEGIN
namespace detail {

inline void append_json_number(std::string& out, double v) {
  if (!std::isfinite(v)) {
    out += "null";
    return;
  }
  out += format_fixed(v, 1);
}

/// A double that reads back exactly; null when not finite (detail/text.hpp).
inline void append_json_double(std::string& out, double v) {
  char buf[max_double_chars];
  out.append(buf, write_exact_double(buf, v));
}

/// `,"work":{...}` of a row that declared work (null when none): the sums, then the derived rates (null
/// where they do not exist) and what they divide by.
inline void append_json_work(std::string& out, const declared_work& w, const report& rep) {
  out += ",\"work\":";
  if (!w.any()) {
    out += "null";
    return;
  }
  out += "{\"calls\":" + std::to_string(w.calls) + ",\"bytes\":";
  append_json_double(out, w.bytes);
  out += ",\"flops\":";
  append_json_double(out, w.flops);
  out += ",\"device_calls\":" + std::to_string(w.device_calls) + ",\"device_bytes\":";
  append_json_double(out, w.device_bytes);
  out += ",\"device_flops\":";
  append_json_double(out, w.device_flops);
  out += ",\"device_span\":" + std::to_string(w.device_ns) + ",\"device_id\":" + std::to_string(w.device);
  out += ",\"host_calls\":" + std::to_string(w.host_calls) + ",\"host_bytes\":";
  append_json_double(out, w.host_bytes);
  out += ",\"host_flops\":";
  append_json_double(out, w.host_flops);
  out += ",\"host\":" + std::to_string(w.host_ns) + ",\"unmeasured\":" + std::to_string(w.unmeasured);
  const work_rate r = rate_of(w);
  out += ",\"basis\":";
  append_json_string(out, work_basis_text(r.basis));
  out += ",\"bytes_per_s\":";
  append_json_double(out, r.bytes_per_s);
  out += ",\"flops_per_s\":";
  append_json_double(out, r.flops_per_s);
  out += ",\"flop_per_byte\":";
  append_json_double(out, r.intensity);
  const work_vs_peak v = against_peak(r, w, rep.peak_of(w.device));
  if (v.valid) {
    out += ",\"pct_bw_spec\":";
    append_json_double(out, v.pct_bw_spec);
    out += ",\"pct_bw_measured\":";
    append_json_double(out, v.pct_bw_measured);
    out += ",\"pct_flops_spec\":";
    append_json_double(out, v.pct_flops_spec);
    out += ",\"pct_flops_measured\":";
    append_json_double(out, v.pct_flops_measured);
    out += ",\"bound\":";
    append_json_string(out, v.bound);
    out += ",\"ridge\":";
    append_json_double(out, v.ridge);
    out += v.fits_l2 ? ",\"fits_l2\":true" : ",\"fits_l2\":false";
  }
  out += '}';
}

/// `,"device_peaks":[...]`: each device's spec figures and, once calibrated, measured ones (null: unknown).
inline void append_json_device_peaks(std::string& out, const std::vector<device_peak>& peaks) {
  out += ",\"device_peaks\":[";
  for (std::size_t i = 0; i < peaks.size(); ++i) {
    const device_peak& p = peaks[i];
    out += i ? ",{\"device\":" : "{\"device\":";
    out += std::to_string(p.device) + ",\"name\":";
    append_json_string(out, p.name);
    out += ",\"cc_major\":" + std::to_string(p.cc_major) + ",\"cc_minor\":" + std::to_string(p.cc_minor) +
           ",\"sm_count\":" + std::to_string(p.sm_count) + ",\"sm_clock_hz\":";
    append_json_double(out, p.sm_clock_hz);
    out += ",\"memory_clock_hz\":";
    append_json_double(out, p.memory_clock_hz);
    out += ",\"bus_width_bits\":" + std::to_string(p.bus_width_bits) + ",\"l2_bytes\":" + std::to_string(p.l2_bytes) +
           ",\"spec_bytes_per_s\":";
    append_json_double(out, p.spec_bytes_per_s);
    out += ",\"spec_flops_per_s\":";
    append_json_double(out, p.spec_flops_per_s);
    out += ",\"measured_bytes_per_s\":";
    append_json_double(out, p.measured_bytes_per_s);
    out += ",\"measured_flops_per_s\":";
    append_json_double(out, p.measured_flops_per_s);
    out += ",\"measured_note\":";
    append_json_string(out, p.measured_note);
    out += '}';
  }
  out += ']';
}

/// `,"work":{...}`: what became of every declaration of work in the run.
inline void append_json_work_counts(std::string& out, const work_counts& w) {
  out += ",\"work\":{\"declared\":" + std::to_string(w.declared) + ",\"no_scope\":" + std::to_string(w.no_scope) +
         ",\"lost\":" + std::to_string(w.lost) + ",\"rejected\":" + std::to_string(w.rejected) +
         ",\"pending\":" + std::to_string(w.pending) + "}";
}

inline void append_json_counts(std::string& out, const scope_counts& c) {
  out += "{\"entered\":" + std::to_string(c.entered) + ",\"recorded\":" + std::to_string(c.recorded) +
         ",\"dropped\":" + std::to_string(c.dropped) + ",\"in_flight\":" + std::to_string(c.in_flight) + "}";
}

inline void append_json_stats(std::string& out, const duration_stats& s) {
  out += "\"avg\":";
  append_json_number(out, s.mean);
  out += ",\"median\":";
  append_json_number(out, s.median);
  out += ",\"p90\":";
  append_json_number(out, s.p90);
  out += ",\"p99\":";
  append_json_number(out, s.p99);
  out += ",\"min\":" + std::to_string(s.min) + ",\"max\":" + std::to_string(s.max) + ",\"stddev\":";
  append_json_number(out, s.stddev);
}

/// `,"histogram":[[lower, upper, count], ...]`: the non-empty buckets, bounds inclusive, in ns.
inline void append_json_histogram(std::string& out, const std::vector<histogram_bin>& bins) {
  out += ",\"histogram\":[";
  for (std::size_t i = 0; i < bins.size(); ++i) {
    if (i) out += ',';
    out += '[' + std::to_string(bins[i].lower_ns) + ',' + std::to_string(bins[i].upper_ns) + ',' +
           std::to_string(bins[i].count) + ']';
  }
  out += ']';
}

/// `"self_stats":{count, sum, avg, median, p90, p99, min, max, stddev}` of a row's self times.
inline void append_json_self_stats(std::string& out, const duration_stats& s) {
  out += ",\"self_stats\":{\"count\":" + std::to_string(s.count) + ",\"sum\":" + std::to_string(s.sum) + ',';
  append_json_stats(out, s);
  out += '}';
}

/// CUPTI quantities of a row: null unless the CUPTI evidence is valid.
inline void append_json_cupti(std::string& out, bool valid, std::int64_t busy, std::int64_t busy_self,
                              std::uint64_t kernels, std::uint64_t copies) {
  if (!valid) {
    out += "null";
    return;
  }
  out += "{\"busy\":" + std::to_string(busy) + ",\"busy_self\":" + std::to_string(busy_self) +
         ",\"kernels\":" + std::to_string(kernels) + ",\"copies\":" + std::to_string(copies) + "}";
}

/// Schema, version, counts, evidence and warnings: everything before the threads.
inline void append_json_head(std::string& out, const report& rep) {
  out += "{\"schema\":\"scopeprof-report/1\",\"version\":\"" SCOPEPROF_VERSION_STRING "\",\"units\":\"ns\",";
  out += "\"process\":";
  append_json_process(out, rep.process());
  out += ',';
  out += "\"counts\":";
  append_json_counts(out, rep.counts());
  out += ",\"timeline\":{\"policy\":";
  append_json_string(out, rep.timeline().policy);
  out += ",\"kept\":" + std::to_string(rep.timeline().kept) + ",\"left_out\":" + std::to_string(rep.timeline().left_out) + "}";
  out += ",\"orphans\":" + std::to_string(rep.orphan_count());
  append_json_work_counts(out, rep.work());
  append_json_device_peaks(out, rep.device_peaks());
  out += ",\"evidence\":{\"host\":";
  append_json_string(out, rep.sources().host);
  out += ",\"device\":";
  append_json_string(out, rep.sources().device);
  out += rep.sources().device_valid ? ",\"device_valid\":true" : ",\"device_valid\":false";
  out += ",\"cupti\":";
  append_json_string(out, rep.sources().cupti);
  out += rep.sources().cupti_valid ? ",\"cupti_valid\":true" : ",\"cupti_valid\":false";
  out += ",\"torch\":";
  append_json_string(out, rep.sources().torch);
  out += "},\"warnings\":";
  append_json_string(out, rep.warnings());
  // Which figures are approximate: the quantiles, from a log-bucket histogram; everything else is exact.
  out += ",\"quantiles\":{\"fields\":[\"median\",\"p90\",\"p99\"],\"relative_error\":\"1/129\"}";
}

inline void append_json_thread(std::string& out, const thread_desc& t) {
  out += "{\"index\":" + std::to_string(t.index) + ",\"os_id\":" + std::to_string(t.os_id) + ",\"name\":";
  append_json_string(out, t.name);
  out += t.exited ? ",\"exited\":true,\"counts\":" : ",\"exited\":false,\"counts\":";
  append_json_counts(out, t.counts);
  out += '}';
}

inline void append_json_flat_row(std::string& out, const flat_row& f, bool cupti_valid, const report& rep) {
  out += "{\"name\":";
  append_json_string(out, f.name);
  out += ",\"calls\":" + std::to_string(f.calls) + ",\"host\":{\"total\":" + std::to_string(f.host_total_ns) +
         ",\"self\":" + std::to_string(f.host_self_ns) + ",";
  append_json_stats(out, f.host);
  append_json_histogram(out, f.host_histogram);
  append_json_self_stats(out, f.host_self);
  out += ",\"time_pct\":";
  append_json_number(out, f.host_time_pct);
  out += "},\"device\":";
  if (f.device_calls) {
    out += "{\"calls\":" + std::to_string(f.device_calls) + ",\"total\":" + std::to_string(f.device_total_ns) +
           ",\"self\":" + std::to_string(f.device_self_ns) + ",";
    append_json_stats(out, f.device);
    append_json_histogram(out, f.device_histogram);
    append_json_self_stats(out, f.device_self);
    out += ",\"captured\":" + std::to_string(f.device_captured) + ",\"invalid\":" + std::to_string(f.device_invalid) + "}";
  } else {
    out += "null";
  }
  out += ",\"device_status\":";
  append_json_string(out, device_status_text(f.device_calls, f.device_captured, f.device_invalid));
  out += ",\"cupti\":";
  append_json_cupti(out, cupti_valid, f.device_busy_ns, f.device_busy_self_ns, f.kernels, f.copies);
  append_json_work(out, f.work, rep);
  out += '}';
}

inline void append_json_tree_row(std::string& out, const tree_row& t, bool cupti_valid, const report& rep) {
  out += "{\"name\":";
  append_json_string(out, t.name);
  out += ",\"depth\":" + std::to_string(t.depth) + ",\"parent\":" + std::to_string(t.parent) +
         ",\"calls\":" + std::to_string(t.calls) + ",\"host\":{\"total\":" + std::to_string(t.host_total_ns) +
         ",\"self\":" + std::to_string(t.host_self_ns) + ',';
  append_json_stats(out, t.host);
  append_json_self_stats(out, t.host_self);
  out += "},\"device\":";
  if (t.device_calls) {
    out += "{\"calls\":" + std::to_string(t.device_calls) + ",\"total\":" + std::to_string(t.device_total_ns) +
           ",\"self\":" + std::to_string(t.device_self_ns) + ',';
    append_json_stats(out, t.device);
    append_json_self_stats(out, t.device_self);
    out += '}';
  } else {
    out += "null";
  }
  out += ",\"cupti\":";
  append_json_cupti(out, cupti_valid, t.device_busy_ns, t.device_busy_self_ns, t.kernels, t.copies);
  append_json_work(out, t.work, rep);
  out += '}';
}

inline void append_json_kernel_row(std::string& out, const kernel_summary_row& k) {
  out += "{\"scope\":";
  append_json_string(out, k.scope);
  out += ",\"name\":";
  append_json_string(out, k.kernel);
  out += ",\"mangled\":";
  append_json_string(out, k.mangled);
  out += ",\"instances\":" + std::to_string(k.time.count) + ",\"total\":" + std::to_string(k.time.sum) + ",";
  append_json_stats(out, k.time);
  out += ",\"time_pct\":";
  append_json_number(out, k.time_pct);
  out += '}';
}

/// `"steps": {"complete", "marks", "lost", "cut", "first", "last", "host": {count, sum, stats, histogram}}`.
inline void append_json_steps(std::string& out, const report& rep) {
  const step_summary& s = rep.step_stats();
  out += ",\"steps\":{\"complete\":" + std::to_string(s.complete) + ",\"marks\":" + std::to_string(s.marks) +
         ",\"lost\":" + std::to_string(s.lost) + ",\"cut\":" + std::to_string(s.cut) + ",\"first\":";
  out += rep.steps().empty() ? std::string("null") : std::to_string(rep.steps().front().index);
  out += ",\"last\":";
  out += rep.steps().empty() ? std::string("null") : std::to_string(rep.steps().back().index);
  out += ",\"host\":{\"count\":" + std::to_string(s.host.count) + ",\"sum\":" + std::to_string(s.host.sum) + ',';
  append_json_stats(out, s.host);
  append_json_histogram(out, s.host_histogram);
  out += "}}";
}

/// The json report of `rep`, streamed into `sink`.
inline void serialize_json(const report& rep, output_sink& sink) {
  std::string& out = sink.text();
  const bool cupti_valid = rep.sources().cupti_valid;
  append_json_head(out, rep);
  out += ",\"threads\":[";
  for (std::size_t i = 0; i < rep.threads().size(); ++i) {
    if (i) out += ',';
    append_json_thread(out, rep.threads()[i]);
  }
  out += "],\"flat\":[";
  for (std::size_t i = 0; i < rep.flat().size(); ++i) {
    sink.row_done();
    if (i) out += ',';
    append_json_flat_row(out, rep.flat()[i], cupti_valid, rep);
  }
  out += "],\"tree\":[";
  for (std::size_t i = 0; i < rep.tree().size(); ++i) {
    sink.row_done();
    if (i) out += ',';
    append_json_tree_row(out, rep.tree()[i], cupti_valid, rep);
  }
  out += "],\"kernel_summary\":[";
  for (std::size_t i = 0; i < rep.kernel_summary().size(); ++i) {
    sink.row_done();
    if (i) out += ',';
    append_json_kernel_row(out, rep.kernel_summary()[i]);
  }
  out += ']';
  append_json_steps(out, rep);
  out += "}\n";
  sink.flush();
}

}  // namespace detail
SCOPEPROF_NAMESPACE_END
