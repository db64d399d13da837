// scopeprof: the text report. Tree view first (where time went, by call path), then the flat view (per
// name statistics), each with host and device columns side by side and the evidence behind them.
#pragma once

#include <scopeprof/detail/demangle.hpp>
#include <scopeprof/detail/process_text.hpp>
#include <scopeprof/detail/text.hpp>
#include <scopeprof/report.hpp>
#include <scopeprof/work_rate.hpp>

#include <cmath>
#include <cstdio>
#include <ostream>
#include <string>
#include <vector>

SCOPEPROF_NAMESPACE_BEGIN
namespace detail {

struct text_table {
  std::vector<std::string> header;
  std::vector<bool> left;  // left-aligned columns
  std::vector<std::vector<std::string>> rows;

  void print(std::ostream& out) const {
    std::vector<std::size_t> width(header.size(), 0);
    for (std::size_t c = 0; c < header.size(); ++c) width[c] = display_width(header[c]);
    for (const auto& r : rows)
      for (std::size_t c = 0; c < r.size() && c < width.size(); ++c) width[c] = (std::max)(width[c], display_width(r[c]));
    const auto line = [&](const std::vector<std::string>& cells) {
      std::string s;
      for (std::size_t c = 0; c < header.size(); ++c) {
        const std::string& v = c < cells.size() ? cells[c] : std::string();
        const std::string pad(width[c] - display_width(v), ' ');
        if (c) s += "  ";
        s += left[c] ? v + pad : pad + v;
      }
      while (!s.empty() && s.back() == ' ') s.pop_back();
      out << s << '\n';
    };
    line(header);
    std::size_t total = 0;
    for (auto w : width) total += w + 2;
    out << std::string(total > 2 ? total - 2 : 0, '-') << '\n';
    for (const auto& r : rows) line(r);
  }
};

inline std::string na_or_duration(std::uint64_t n, double ns) { return n ? format_duration_ns(ns) : "n/a"; }

inline std::string ratio_cell(std::int64_t host_ns, std::uint64_t device_calls, std::int64_t device_ns) {
  if (device_calls == 0 || device_ns <= 0) return "n/a";
  return format_fixed(static_cast<double>(host_ns) / static_cast<double>(device_ns), 2);
}

/// The header: counts, the evidence behind each kind of time, the collector's warnings.
inline void print_report_header(const report& rep, std::ostream& out) {
  out << "scopeprof report: " << rep.counts().recorded << " scopes recorded";
  if (rep.counts().dropped) out << ", " << rep.counts().dropped << " DROPPED (record buffer full; see SCOPEPROF_MAX_RECORDS)";
  if (rep.counts().in_flight) out << ", " << rep.counts().in_flight << " still open (not in the tables)";
  out << ", " << rep.threads().size() << " thread" << (rep.threads().size() == 1 ? "" : "s") << "\n";
  out << "  process:     " << process_words(rep.process()) << "\n";
  out << "  host time:   " << rep.sources().host << "\n";
  out << "  device time: " << rep.sources().device << "\n";
  out << "  CUPTI:       " << rep.sources().cupti << "\n";
  out << "  torch:       " << rep.sources().torch << "\n";
  if (!rep.warnings().empty()) out << rep.warnings();
}

/// The tree view: one row per call path. The CUPTI columns appear only when CUPTI evidence is valid;
/// otherwise the header line says why.
inline void print_tree_table(const report& rep, std::ostream& out, bool cupti) {
  out << "\nCall tree (all threads merged; Host/Dev = host total / device span):\n";
  text_table tree{{"Scope", "Calls", "Host total", "Host self", "Dev span", "Dev self", "Host/Dev"},
                  {true, false, false, false, false, false, false},
                  {}};
  if (cupti) {
    tree.header.insert(tree.header.end(), {"Dev busy", "Kernels"});
    tree.left.insert(tree.left.end(), {false, false});
  }
  for (const auto& t : rep.tree()) {
    std::string name(2 * t.depth, ' ');
    name += display_name(t.name);
    tree.rows.push_back({name, std::to_string(t.calls), format_duration_ns(static_cast<double>(t.host_total_ns)),
                         format_duration_ns(static_cast<double>(t.host_self_ns)),
                         na_or_duration(t.device_calls, static_cast<double>(t.device_total_ns)),
                         na_or_duration(t.device_calls, static_cast<double>(t.device_self_ns)),
                         ratio_cell(t.host_total_ns, t.device_calls, t.device_total_ns)});
    if (cupti) {
      tree.rows.back().push_back(format_duration_ns(static_cast<double>(t.device_busy_ns)));
      tree.rows.back().push_back(std::to_string(t.kernels));
    }
  }
  tree.print(out);
}

/// The flat view: one row per name with the statistics of its instances.
inline void print_flat_table(const report& rep, std::ostream& out, bool cupti) {
  out << "\nBy name (Avg/p50/p99/Min/Max/StdDev of host total per call; Time % = share of all host self time):\n";
  text_table flat{{"Name", "Calls", "Host total", "Host self", "Avg", "p50~", "p99~", "Min", "Max", "StdDev", "Time %",
                   "Dev span", "Dev self", "Dev avg", "Dev p50~", "Dev p99~", "Host/Dev"},
                  {true, false, false, false, false, false, false, false, false, false, false, false, false, false, false,
                   false, false},
                  {}};
  if (cupti) {
    flat.header.insert(flat.header.end(), {"Dev busy", "Busy self", "Kernels"});
    flat.left.insert(flat.left.end(), {false, false, false});
  }
  for (const auto& f : rep.flat()) {
    const std::string dev_span = f.device_calls ? format_duration_ns(static_cast<double>(f.device_total_ns))
                                                : device_status_text(0, f.device_captured, f.device_invalid);
    flat.rows.push_back({display_name(f.name), std::to_string(f.calls),
                         format_duration_ns(static_cast<double>(f.host_total_ns)),
                         format_duration_ns(static_cast<double>(f.host_self_ns)), format_duration_ns(f.host.mean),
                         format_duration_ns(f.host.median), format_duration_ns(f.host.p99),
                         format_duration_ns(static_cast<double>(f.host.min)),
                         format_duration_ns(static_cast<double>(f.host.max)), format_duration_ns(f.host.stddev),
                         format_fixed(f.host_time_pct, 1), dev_span,
                         na_or_duration(f.device_calls, static_cast<double>(f.device_self_ns)),
                         na_or_duration(f.device_calls, f.device.mean), na_or_duration(f.device_calls, f.device.median),
                         na_or_duration(f.device_calls, f.device.p99),
                         ratio_cell(f.host_total_ns, f.device_calls, f.device_total_ns)});
    if (cupti) {
      flat.rows.back().push_back(format_duration_ns(static_cast<double>(f.device_busy_ns)));
      flat.rows.back().push_back(format_duration_ns(static_cast<double>(f.device_busy_self_ns)));
      flat.rows.back().push_back(std::to_string(f.kernels));
    }
  }
  flat.print(out);
}

/// A declared quantity with an SI prefix and three significant digits: "1.23 GB", "850 MFLOP".
inline std::string format_si(double v, const char* unit) {
  static const char* const prefix[] = {"", "k", "M", "G", "T", "P", "E"};
  std::size_t p = 0;
  while (p + 1 < sizeof prefix / sizeof *prefix && (v >= 999.5 || v <= -999.5)) {
    v /= 1000;
    ++p;
  }
  if (v == 0) return std::string("0 ") + unit;
  char buf[48];
  std::snprintf(buf, sizeof buf, v >= 99.95 || v <= -99.95 ? "%.0f %s%s" : v >= 9.995 || v <= -9.995 ? "%.1f %s%s" : "%.2f %s%s",
                v, prefix[p], unit);
  return buf;
}

/// A rate cell: the value with `digits` decimals, or "n/a".
inline std::string rate_cell(double v, double scale, int digits) {
  return std::isfinite(v) ? format_fixed(v / scale, digits) : std::string("n/a");
}

/// The devices' peaks under the declared-work table: spec, measured, and how.
inline void print_device_peaks(const report& rep, std::ostream& out) {
  for (const device_peak& p : rep.device_peaks()) {
    const auto bw = [](double v) { return std::isfinite(v) ? format_fixed(v / 1e9, 0) + " GB/s" : std::string("n/a"); };
    const auto fl = [](double v) { return std::isfinite(v) ? format_fixed(v / 1e12, 1) + " TFLOP/s" : std::string("n/a"); };
    out << "  device " << p.device << " (" << (p.name.empty() ? std::string("?") : p.name) << ", sm_" << p.cc_major
        << p.cc_minor << ", L2 " << format_si(static_cast<double>(p.l2_bytes), "B") << "): spec " << bw(p.spec_bytes_per_s)
        << ", " << fl(p.spec_flops_per_s) << " FP32 (device attributes); measured "
        << (std::isfinite(p.measured_bytes_per_s) || std::isfinite(p.measured_flops_per_s)
                ? bw(p.measured_bytes_per_s) + ", " + fl(p.measured_flops_per_s) + " (" + p.measured_note + ")"
                : std::string(p.measured_note.empty() ? "n/a (scopeprof::calibrate_device() or SCOPEPROF_CALIBRATE=1)"
                                                      : "n/a (" + p.measured_note + ")"))
        << "\n";
  }
}

/// The declared-work view, only when some scope declared work: per name, the declared sums and the rates
/// they give over device span (or host time where no instance with work has a span, marked "host"), and,
/// where the device's peaks are known, their percent of the spec and measured peaks and the bound.
inline void print_work_table(const report& rep, std::ostream& out) {
  bool any = false, peaks = false;
  for (const auto& f : rep.flat()) {
    any |= f.work.any();
    peaks |= against_peak(rate_of(f.work), f.work, rep.peak_of(f.work.device)).valid;
  }
  if (!any) return;
  out << "\nDeclared work (PROF_SCOPE_WORK / add_work: bytes and FLOPs as the program declares them; rates over\n"
         "the device span of the instances that declared work, or over their host time where none has a span):\n";
  text_table t{{"Name", "Calls", "Declared bytes", "Declared FLOPs", "Over", "Time", "GB/s", "TFLOP/s", "FLOP/B"},
               {true, false, false, false, true, false, false, false, false},
               {}};
  if (peaks) {
    t.header.insert(t.header.end(), {"%BW spec", "%BW meas", "%FLOP spec", "%FLOP meas", "Bound"});
    t.left.insert(t.left.end(), {false, false, false, false, true});
  }
  std::vector<std::string> in_l2;
  for (const auto& f : rep.flat()) {
    if (!f.work.any()) continue;
    const work_rate r = rate_of(f.work);
    const std::string over = r.basis == work_basis::none ? std::string("n/a (") + r.why_not + ")" : work_basis_text(r.basis);
    t.rows.push_back({display_name(f.name), std::to_string(f.work.calls), format_si(f.work.bytes, "B"),
                      format_si(f.work.flops, "FLOP"), over,
                      r.basis == work_basis::none ? std::string("n/a") : format_duration_ns(r.seconds * 1e9),
                      rate_cell(r.bytes_per_s, 1e9, 1), rate_cell(r.flops_per_s, 1e12, 3), rate_cell(r.intensity, 1, 3)});
    if (!peaks) continue;
    const work_vs_peak v = against_peak(r, f.work, rep.peak_of(f.work.device));
    t.rows.back().insert(t.rows.back().end(), {rate_cell(v.pct_bw_spec, 1, 1), rate_cell(v.pct_bw_measured, 1, 1),
                                               rate_cell(v.pct_flops_spec, 1, 1), rate_cell(v.pct_flops_measured, 1, 1),
                                               v.bound});
    if (v.fits_l2) in_l2.push_back(display_name(f.name));
  }
  t.print(out);
  print_device_peaks(rep, out);
  for (const auto& name : in_l2)
    out << "Note: " << name << " declares no more bytes per call than the L2 cache holds: its bandwidth may exceed\n"
           "DRAM's (the data need not leave L2), so its percent of peak is not a DRAM figure.\n";
  const work_counts& w = rep.work();
  if (w.pending) out << "Note: " << w.pending << " declarations wait for scopes still open (not in the table).\n";
}

/// The kernel summary (CUPTI): one row per (scope, kernel).
inline void print_kernel_table(const report& rep, std::ostream& out) {
  out << "\nKernels by scope (CUPTI; Time % = share of all kernel time; Avg/Med/Min/Max/StdDev per instance;\n"
         "names demangled and cut at 100 characters as Nsight Systems does; the JSON report keeps them whole and mangled):\n";
  if (rep.kernel_summary().empty()) {
    out << "(no kernels)\n";
    return;
  }
  text_table kern{{"Time %", "Total Time", "Instances", "Avg", "Med~", "Min", "Max", "StdDev", "Scope", "Name"},
                  {false, false, false, false, false, false, false, false, true, true},
                  {}};
  for (const auto& k : rep.kernel_summary())
    kern.rows.push_back({format_fixed(k.time_pct, 1), format_duration_ns(static_cast<double>(k.time.sum)),
                         std::to_string(k.time.count), format_duration_ns(k.time.mean),
                         format_duration_ns(k.time.median), format_duration_ns(static_cast<double>(k.time.min)),
                         format_duration_ns(static_cast<double>(k.time.max)), format_duration_ns(k.time.stddev),
                         display_name(k.scope), clip_to_width(display_name(k.kernel))});
  kern.print(out);
}

/// The steps (next_step()): how many, host time per step, and what made any of them unreliable.
inline void print_step_table(const report& rep, std::ostream& out) {
  const step_summary& s = rep.step_stats();
  if (s.marks == 0 && s.lost == 0) return;
  out << "\nSteps (PROF_STEP / next_step(): host time from one step marker to the next): " << s.complete << " complete";
  if (s.complete) {
    const duration_stats& h = s.host;
    // (A report read back from JSON has the statistics but no per-step timeline.)
    if (!rep.steps().empty()) out << ", ProfilerStep#" << rep.steps().front().index << " .. #" << rep.steps().back().index;
    out << "\n";
    text_table t{{"Steps", "Total", "Avg", "p50~", "p90~", "p99~", "Min", "Max", "StdDev"},
                 {false, false, false, false, false, false, false, false, false},
                 {{std::to_string(h.count), format_duration_ns(static_cast<double>(h.sum)), format_duration_ns(h.mean),
                   format_duration_ns(h.median), format_duration_ns(h.p90), format_duration_ns(h.p99),
                   format_duration_ns(static_cast<double>(h.min)), format_duration_ns(static_cast<double>(h.max)),
                   format_duration_ns(h.stddev)}}};
    t.print(out);
  } else {
    out << " (a step is complete when the next one begins)\n";
  }
  if (s.cut)
    out << "Note: " << s.cut << " steps began or ended inside open scopes (call PROF_STEP() outside any scope).\n";
  if (s.lost) out << "Note: " << s.lost << " step markers were not recorded (out of memory); the steps across them are left out.\n";
}

/// The footnotes: how to read the totals, and the orphans.
inline void print_report_notes(const report& rep, std::ostream& out, bool cupti) {
  out << "\nNote: totals are inclusive. Do not add up the totals of nested rows: a parent's total already\n"
         "contains its children. Self columns and Time % can be added. Host time is CPU time spent inside the\n"
         "scope (mostly launching asynchronous work); device span is GPU time between the scope's boundaries\n"
         "on its stream. They are different quantities and are never summed.\n"
         "Columns marked ~ (p50, p99, Med) are within 1% (1/129 relative, a log-bucket histogram); every other\n"
         "figure is exact.\n";
  if (cupti)
    out << "Dev busy is the summed duration of the kernels, copies and memsets launched inside the scope (CUPTI);\n"
           "it can exceed the span when work overlaps or runs on other streams.\n";
  if (rep.orphan_count())
    out << "Note: " << rep.orphan_count()
        << " scopes whose parent was still open (or dropped) when the report was taken are shown at top level.\n";
}

/// The text report of `rep`: tree view, flat view, kernel summary, notes.
inline void print_tables(const report& rep, std::ostream& out) {
  print_report_header(rep, out);
  if (rep.tree().empty() && rep.flat().empty()) {
    out << "(no finished scopes)\n";
    print_step_table(rep, out);
    return;
  }
  const bool cupti = rep.sources().cupti_valid;
  print_tree_table(rep, out, cupti);
  print_flat_table(rep, out, cupti);
  print_work_table(rep, out);
  if (cupti) print_kernel_table(rep, out);
  print_step_table(rep, out);
  print_report_notes(rep, out, cupti);
}

}  // namespace detail
SCOPEPROF_NAMESPACE_END
