// scopeprof tool, `diff`: the comparison (compare) and the command (run_diff): load both reports, refuse
// reports of different programs, compare, write the chosen format, and exit 1 on a significant regression
// above --fail-above. The writers are in diff_output.cpp.
#include "diff.hpp"

#include "report_file.hpp"
#include "suffix.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

namespace scopeprof_cli {

const char* verdict_text(diff_verdict v) noexcept {
  switch (v) {
    case diff_verdict::slower: return "slower";
    case diff_verdict::faster: return "faster";
    case diff_verdict::same: return "same";
    case diff_verdict::too_few_calls: return "too few calls";
    case diff_verdict::only_in_a: return "only in A";
    case diff_verdict::only_in_b: return "only in B";
  }
  return "same";
}

namespace {

// One quantity of one flat row: what the comparison reads of it.
struct quantity_view {
  std::uint64_t calls = 0;
  double median = 0;
  std::int64_t total = 0;
  const std::vector<scopeprof::histogram_bin>* histogram = nullptr;
};

quantity_view view_of(const scopeprof::flat_row& r, bool device) {
  if (device) return {r.device_calls, r.device.median, r.device_total_ns, &r.device_histogram};
  return {r.calls, r.host.median, r.host_total_ns, &r.host_histogram};
}

double relative_change(double median_a, double median_b) {
  if (median_a > 0) return median_b / median_a - 1;
  // A median of 0 ns (sub-nanosecond scopes): any B above it is an unbounded relative change.
  return median_b > 0 ? std::numeric_limits<double>::infinity() : 0.0;
}

diff_verdict verdict_of(const diff_row& r, const diff_settings& s) {
  if (!r.test.tested) return diff_verdict::too_few_calls;
  const bool significant = r.test.p_value < s.alpha;
  if (!significant || std::fabs(r.change) < s.min_change) return diff_verdict::same;
  return r.change > 0 ? diff_verdict::slower : diff_verdict::faster;
}

// A row present on both sides: medians, totals, the test and the verdict.
diff_row both_sides(const std::string& name, const char* quantity, const quantity_view& a, const quantity_view& b,
                    const diff_settings& s) {
  diff_row r;
  r.name = name;
  r.quantity = quantity;
  r.calls_a = a.calls;
  r.calls_b = b.calls;
  r.median_a = a.median;
  r.median_b = b.median;
  r.change = relative_change(a.median, b.median);
  r.total_a = a.total;
  r.total_b = b.total;
  r.moved = b.total - a.total;
  r.test = mann_whitney(*a.histogram, *b.histogram);
  r.verdict = verdict_of(r, s);
  // Only a significant slowdown fails: noise ("same", "too few calls") never does.
  r.failed = s.fail_above >= 0 && r.verdict == diff_verdict::slower && r.change > s.fail_above &&
             r.test.p_value < s.alpha && (r.quantity == "host" ? s.gate_host : s.gate_device);
  return r;
}

// A row present on one side only (host time: device rows need device time on both sides).
diff_row one_side(const scopeprof::flat_row& row, bool in_a) {
  const quantity_view v = view_of(row, false);
  diff_row r;
  r.name = row.name;
  r.quantity = "host";
  (in_a ? r.calls_a : r.calls_b) = v.calls;
  (in_a ? r.median_a : r.median_b) = v.median;
  (in_a ? r.total_a : r.total_b) = v.total;
  r.moved = r.total_b - r.total_a;
  r.change = std::numeric_limits<double>::quiet_NaN();
  r.test.n_a = r.calls_a;
  r.test.n_b = r.calls_b;
  r.test.p_value = r.test.effect = std::numeric_limits<double>::quiet_NaN();
  r.verdict = in_a ? diff_verdict::only_in_a : diff_verdict::only_in_b;
  return r;
}

// Largest |moved| first; ties by name, then host before device, so the order is reproducible.
void sort_by_moved(std::vector<diff_row>& rows) {
  auto magnitude = [](std::int64_t v) { return v < 0 ? -static_cast<double>(v) : static_cast<double>(v); };
  std::stable_sort(rows.begin(), rows.end(), [&](const diff_row& l, const diff_row& r) {
    if (magnitude(l.moved) != magnitude(r.moved)) return magnitude(l.moved) > magnitude(r.moved);
    if (l.name != r.name) return l.name < r.name;
    return l.quantity > r.quantity;  // "host" > "device": host first
  });
}

diff_side side_of(const scopeprof::report& r) {
  const auto& p = r.process();
  return {"", p.program, p.rank, p.host};
}

}  // namespace

diff_result compare(const scopeprof::report& a, const scopeprof::report& b, const diff_settings& settings) {
  diff_result d;
  d.a = side_of(a);
  d.b = side_of(b);
  d.settings = settings;
  std::unordered_map<std::string, const scopeprof::flat_row*> in_b;
  for (const auto& row : b.flat()) in_b.emplace(row.name, &row);
  std::unordered_set<std::string> seen_in_a;
  for (const auto& ra : a.flat()) {
    seen_in_a.insert(ra.name);
    const auto it = in_b.find(ra.name);
    if (it == in_b.end()) {
      d.rows.push_back(one_side(ra, true));
      continue;
    }
    const scopeprof::flat_row& rb = *it->second;
    d.rows.push_back(both_sides(ra.name, "host", view_of(ra, false), view_of(rb, false), settings));
    if (ra.device_calls > 0 && rb.device_calls > 0)
      d.rows.push_back(both_sides(ra.name, "device", view_of(ra, true), view_of(rb, true), settings));
  }
  for (const auto& rb : b.flat())
    if (!seen_in_a.count(rb.name)) d.rows.push_back(one_side(rb, false));
  sort_by_moved(d.rows);
  for (std::size_t i = 0; i < d.rows.size(); ++i)
    if (d.rows[i].failed) d.failed.push_back(i);
  d.work = compare_work(a, b);
  return d;
}

namespace {

bool valid_settings(const diff_options& o, std::string& error) {
  if (!(o.alpha > 0 && o.alpha < 1)) {
    error = "alpha must be between 0 and 1, got " + std::to_string(o.alpha);
    return false;
  }
  if (std::isnan(o.fail_above)) {
    error = "--fail-above is not a number";
    return false;
  }
  if (o.fail_on != "both" && o.fail_on != "host" && o.fail_on != "device") {
    error = "--fail-on takes host, device or both, not '" + o.fail_on + "'";
    return false;
  }
  return true;
}

// The format asked for, else the output's suffix, else text.
bool output_format(const diff_options& o, std::string& format, std::string& error) {
  if (!o.format.empty()) {
    if (o.format != "text" && o.format != "md" && o.format != "json") {
      error = "unknown format '" + o.format + "' (expected text, md or json)";
      return false;
    }
    format = o.format;
    return true;
  }
  format = ends_with(o.output, ".md") ? "md" : ends_with(o.output, ".json") ? "json" : "text";
  return true;
}

// Both reports name their program and the names differ: comparing them is almost surely a mistake.
bool same_program(const report_file& a, const report_file& b, const diff_options& o, std::string& error) {
  const std::string& pa = a.report.process().program;
  const std::string& pb = b.report.process().program;
  if (o.allow_other_program || pa.empty() || pb.empty() || pa == pb) return true;
  error = o.baseline + " (program " + pa + ") and " + o.candidate + " (program " + pb +
          ") come from different programs (--allow-other-program compares them anyway)";
  return false;
}

void render(const diff_result& d, const std::string& format, int width, std::ostream& out) {
  if (format == "md")
    write_diff_markdown(d, out);
  else if (format == "json")
    write_diff_json(d, out);
  else
    write_diff_text(d, out, width);
}

// To `out` for "" and "-", else to the file (whole, or an error naming it).
bool emit(const std::string& path, const std::string& text, std::ostream& out, std::string& error) {
  if (path.empty() || path == "-") {
    out << text;
    return true;
  }
  errno = 0;
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (file) file << text;
  if (file) file.flush();
  if (!file) {
    const int code = errno;
    error = "cannot write " + path + (code ? std::string(": ") + std::strerror(code) : std::string());
    return false;
  }
  return true;
}

}  // namespace

int run_diff(const diff_options& o, std::ostream& out, std::ostream& err) {
  std::string error, format;
  report_file a, b;
  const bool ok = valid_settings(o, error) && output_format(o, format, error) &&
                  load_report(o.baseline, a, error) && load_report(o.candidate, b, error) &&
                  same_program(a, b, o, error);
  if (!ok) {
    err << "scopeprof diff: " << error << "\n";
    return exit_bad_input;
  }
  diff_settings settings;
  settings.alpha = o.alpha;
  settings.fail_above = o.fail_above;
  settings.gate_host = o.fail_on != "device";
  settings.gate_device = o.fail_on != "host";
  diff_result d = compare(a.report, b.report, settings);
  d.a.path = o.baseline;
  d.b.path = o.candidate;
  std::ostringstream text;
  render(d, format, o.width, text);
  if (!emit(o.output, text.str(), out, error)) {
    err << "scopeprof diff: " << error << "\n";
    return exit_bad_input;
  }
  if (d.failed.empty()) return exit_ok;
  err << "scopeprof diff: " << failed_rows_text(d) << "\n";
  return exit_finding;
}

}  // namespace scopeprof_cli
