// scopeprof: the data of the HTML report (format/html.hpp): one JSON document, read by the page's script.
//
//   {"schema": "scopeprof-html/1", "generator": "scopeprof 0.1.0",
//    "report": {...},                 // the JSON report (format/json.hpp), as report::json() writes it
//    "limits": {"root_points_per_thread": 20000, "histogram_names": 48},
//    "histograms": [{"name", "quantity": "host" | "device", "count", "bins": [[lo_ns, hi_ns, n], ...]}],
//    "roots": {"names": [...by site], "threads": [{"thread", "name", "roots", "shown",
//                                                  "points": [[begin_ns, duration_ns, site], ...]}]},
//    "ranks": null}
//
// Histograms are a list of {name, bins}: the report's per-name buckets (flat_row::host_histogram and
// device_histogram, which count every call) coarsened to 8 bins per octave; contiguous [lo, hi]
// nanosecond bins with counts. Root points are the top-level instances of each thread (start
// from the report's origin, host duration, site); past root_points_per_thread a thread's roots are split
// into groups of consecutive instances and each group's shortest and longest are kept, so spikes survive.
#pragma once

#include <scopeprof/detail/log_histogram.hpp>
#include <scopeprof/detail/sink.hpp>
#include <scopeprof/detail/text.hpp>
#include <scopeprof/format/json.hpp>
#include <scopeprof/report.hpp>
#include <scopeprof/version.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

SCOPEPROF_NAMESPACE_BEGIN
namespace detail {

/// Root instances of one thread the time plot gets at most (the page states the cap).
constexpr std::size_t html_root_points_per_thread = 20000;
/// Names that get duration histograms: those with the largest host totals.
constexpr std::size_t html_histogram_names = 48;
/// log_histogram buckets merged into one bin: 64 sub-buckets per octave / 8 = 8 bins per octave.
constexpr std::uint32_t html_histogram_merge = 8;

/// JSON text made safe inside <script type="application/json">: '<', '>' and '&' only occur inside JSON
/// strings, where \u003c, \u003e and \u0026 mean the same characters, so no "</script" or "<!--" can
/// appear and JSON.parse still reads the same document.
inline void append_script_safe_json(output_sink& sink, std::string_view json) {
  std::string& out = sink.text();
  std::size_t start = 0;
  for (std::size_t i = 0; i < json.size(); ++i) {
    const char c = json[i];
    if (c != '<' && c != '>' && c != '&') continue;
    out.append(json.data() + start, i - start);
    out += c == '<' ? "\\u003c" : c == '>' ? "\\u003e" : "\\u0026";
    start = i + 1;
  }
  out.append(json.data() + start, json.size() - start);
}

/// One histogram of the page: the durations of every call of one name (the report's flat row buckets).
struct html_histogram {
  std::string name;
  const char* quantity = "host";  // "host" (host total) or "device" (device span)
  const std::vector<histogram_bin>* bins = nullptr;
  std::uint64_t count = 0;
};

/// The bins of a histogram: the report's buckets merged by groups of html_histogram_merge consecutive
/// log_histogram buckets, each [lowest value, highest value, count]; contiguous and non-overlapping (values
/// below 128 ns: 8 ns wide).
inline void append_html_bins(std::string& out, const std::vector<histogram_bin>& bins) {
  out += '[';
  bool first = true, open = false;
  std::uint32_t group = 0;
  std::uint64_t count = 0;
  const auto close = [&] {
    if (!open) return;
    const std::uint32_t a = group * html_histogram_merge, b = a + html_histogram_merge - 1;
    out += first ? "[" : ",[";
    first = false;
    out += std::to_string(log_histogram::bucket_lower(a)) + ',' + std::to_string(log_histogram::bucket_upper(b)) + ',' +
           std::to_string(count) + ']';
  };
  for (const histogram_bin& bin : bins) {
    const std::uint32_t g = log_histogram::bucket_index(bin.lower_ns) / html_histogram_merge;
    if (!open || g != group) {
      close();
      group = g;
      count = 0;
      open = true;
    }
    count += bin.count;
  }
  close();
  out += ']';
}

/// Host-total and device-span histograms of the html_histogram_names names with the largest host totals,
/// in that order, from the report's per-name buckets (every call, not only the retained instances; a
/// name's device histogram only where it has spans).
inline std::vector<html_histogram> html_histograms_of(const report& rep) {
  std::vector<std::size_t> order(rep.flat().size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return rep.flat()[a].host_total_ns > rep.flat()[b].host_total_ns;
  });
  if (order.size() > html_histogram_names) order.resize(html_histogram_names);
  std::vector<html_histogram> out;
  for (const std::size_t k : order) {
    const flat_row& f = rep.flat()[k];
    out.push_back({f.name, "host", &f.host_histogram, f.host.count});
    if (f.device.count) out.push_back({f.name, "device", &f.device_histogram, f.device.count});
  }
  return out;
}

inline void append_html_histograms(output_sink& sink, const report& rep) {
  const std::vector<html_histogram> hists = html_histograms_of(rep);
  std::string part = "[";
  for (std::size_t i = 0; i < hists.size(); ++i) {
    if (i) part += ',';
    part += "{\"name\":";
    append_json_string(part, hists[i].name);
    part += ",\"quantity\":\"" + std::string(hists[i].quantity) + "\",\"count\":" + std::to_string(hists[i].count) +
            ",\"bins\":";
    append_html_bins(part, *hists[i].bins);
    part += '}';
    append_script_safe_json(sink, part);
    part.clear();
    sink.row_done();
  }
  append_script_safe_json(sink, part + "]");
}

/// Indexes into report::instances() of one thread's roots that the time plot shows: all of them up to
/// html_root_points_per_thread, else the shortest and longest of each group of consecutive roots.
inline std::vector<std::size_t> html_root_sample(const report& rep, const std::vector<std::size_t>& roots) {
  if (roots.size() <= html_root_points_per_thread) return roots;
  const std::size_t groups = html_root_points_per_thread / 2, n = roots.size();
  std::vector<std::size_t> kept;
  kept.reserve(html_root_points_per_thread);
  for (std::size_t g = 0; g < groups; ++g) {
    const std::size_t a = g * n / groups, b = (g + 1) * n / groups;
    std::size_t lo = a, hi = a;
    for (std::size_t i = a; i < b; ++i) {
      const std::int64_t d = rep.instances()[roots[i]].host_total_ns();
      if (d < rep.instances()[roots[lo]].host_total_ns()) lo = i;
      if (d > rep.instances()[roots[hi]].host_total_ns()) hi = i;
    }
    kept.push_back(roots[(std::min)(lo, hi)]);
    if (lo != hi) kept.push_back(roots[(std::max)(lo, hi)]);
  }
  return kept;
}

/// The time plot's input: every thread's root instances (or their sample), start from the origin.
inline void append_html_roots(output_sink& sink, const report& rep) {
  std::string part = "{\"names\":[";
  for (std::size_t s = 0; s < rep.sites().size(); ++s) {
    if (s) part += ',';
    append_json_string(part, rep.sites()[s].name);
  }
  part += "],\"threads\":[";
  std::vector<std::vector<std::size_t>> roots(rep.threads().size());
  for (std::size_t i = 0; i < rep.instances().size(); ++i) {
    const auto& in = rep.instances()[i];
    if (in.parent < 0 && in.thread < roots.size()) roots[in.thread].push_back(i);
  }
  for (std::size_t t = 0; t < roots.size(); ++t) {
    const std::vector<std::size_t> shown = html_root_sample(rep, roots[t]);
    part += t ? ",{\"thread\":" : "{\"thread\":";
    part += std::to_string(rep.threads()[t].index) + ",\"name\":";
    append_json_string(part, rep.threads()[t].name);
    part += ",\"roots\":" + std::to_string(roots[t].size()) + ",\"shown\":" + std::to_string(shown.size()) + ",\"points\":[";
    for (std::size_t k = 0; k < shown.size(); ++k) {
      const auto& in = rep.instances()[shown[k]];
      if (k) part += ',';
      part += '[' + std::to_string(in.host_begin_ns - rep.origin_ns()) + ',' + std::to_string(in.host_total_ns()) + ',' +
              std::to_string(in.site) + ']';
      if (part.size() >= (std::size_t{1} << 16)) {
        append_script_safe_json(sink, part);
        part.clear();
        sink.row_done();
      }
    }
    part += "]}";
  }
  append_script_safe_json(sink, part + "]}");
}

/// The per-rank data of the page: null for a report of one process. A report merged from several ranks
/// writes here an array of {"rank": n, ...numbers}, and the page then shows its per-rank table and chart
/// (renderRanks() in the page's script).
inline void append_html_ranks(output_sink& sink, const report&) { append_script_safe_json(sink, "null"); }

/// The whole JSON document, script-safe, into `sink`.
inline void append_html_data(output_sink& sink, const report& rep) {
  append_script_safe_json(sink, "{\"schema\":\"scopeprof-html/1\",\"generator\":\"scopeprof " SCOPEPROF_VERSION_STRING
                                "\",\"report\":");
  {
    string_sink report_json;
    serialize_json(rep, report_json);
    std::string text = report_json.take();
    while (!text.empty() && text.back() == '\n') text.pop_back();
    append_script_safe_json(sink, text);
  }
  sink.row_done();
  append_script_safe_json(sink, ",\"limits\":{\"root_points_per_thread\":" + std::to_string(html_root_points_per_thread) +
                                    ",\"histogram_names\":" + std::to_string(html_histogram_names) + "},\"histograms\":");
  append_html_histograms(sink, rep);
  append_script_safe_json(sink, ",\"roots\":");
  append_html_roots(sink, rep);
  append_script_safe_json(sink, ",\"ranks\":");
  append_html_ranks(sink, rep);
  append_script_safe_json(sink, "}");
}

}  // namespace detail
SCOPEPROF_NAMESPACE_END
