// scopeprof tool, `diff` output: the text table, the Markdown comment and the JSON document of a
// diff_result, and the number formats they share (times with units, changes in percent, p-values).
#include "diff.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ostream>
#include <sstream>

namespace scopeprof_cli {

namespace {

constexpr const char* tree_note =
    "Tree paths are not tested: the rows of a saved report's call tree carry no histograms, so nodes are the "
    "flat rows (every call of a scope name).";

std::string printf_text(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string printf_text(const char* format, int digits, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, digits, v);
  return buf;
}

// Three significant figures of v in [0, 1000): the digits after the point.
int decimals_for(double v) { return v >= 100 ? 0 : v >= 10 ? 1 : 2; }

// v rounded to the digits decimals_for(v) keeps (999.7 becomes 1000).
double rounded_figures(double v) {
  const double scale = std::pow(10.0, decimals_for(v));
  return std::round(v * scale) / scale;
}

}  // namespace

std::string format_duration(double ns, bool sign) {
  if (std::isnan(ns)) return "n/a";
  const char* units[] = {"ns", "us", "ms", "s"};
  double v = std::fabs(ns);
  int unit = 0;
  // Step up while the value would print as 1000 or more once rounded to its three figures.
  while (unit < 3 && rounded_figures(v) >= 1000) {
    v /= 1000;
    ++unit;
  }
  // Whole nanoseconds print as integers: "5 ns", not "5.00 ns".
  const bool whole = unit == 0 && v == std::floor(v);
  std::string text = printf_text("%.*f", whole ? 0 : decimals_for(v), v) + " " + units[unit];
  if (sign && ns > 0) return "+" + text;
  if (ns < 0) return "-" + text;
  return text;
}

std::string format_threshold(double fraction) { return printf_text("%g", fraction * 100) + "%"; }

std::string format_change(double change) {
  if (std::isnan(change)) return "n/a";
  if (std::isinf(change)) return change > 0 ? "+inf" : "-inf";
  const double pct = change * 100;
  return printf_text("%+.*f", decimals_for(std::fabs(pct)), pct) + "%";
}

namespace {

std::string format_p(const rank_test_result& t) {
  if (!t.tested) return "n/a";
  if (t.p_value <= 0) return "<1e-300";
  return t.p_value < 0.001 ? printf_text("%.1e", t.p_value) : printf_text("%.3f", t.p_value);
}

std::string format_effect(double effect) { return std::isnan(effect) ? "n/a" : printf_text("%.2f", effect); }

std::string count_text(std::uint64_t n) { return std::to_string(n); }

// "1 slower, 3 same": the verdicts that occur, in a fixed order.
std::string verdict_counts(const diff_result& d) {
  const diff_verdict order[] = {diff_verdict::slower,        diff_verdict::faster,    diff_verdict::same,
                                diff_verdict::too_few_calls, diff_verdict::only_in_a, diff_verdict::only_in_b};
  std::string text;
  for (diff_verdict v : order) {
    const auto n = std::count_if(d.rows.begin(), d.rows.end(), [&](const diff_row& r) { return r.verdict == v; });
    if (n) text += (text.empty() ? "" : ", ") + std::to_string(n) + " " + verdict_text(v);
  }
  return text.empty() ? "no scopes in either report" : text;
}

std::string side_text(const diff_side& s) {
  return s.path + " (program " + (s.program.empty() ? "unknown" : s.program) + ", rank " + std::to_string(s.rank) +
         (s.host.empty() ? "" : ", host " + s.host) + ")";
}

std::string method_text(const diff_settings& s) {
  std::ostringstream m;
  m << diff_method << ", alpha " << s.alpha << "; change is of the median per call; slower/faster need "
    << "significance and a change of at least " << format_threshold(s.min_change);
  return m.str();
}

// "fail-above 5%: ..." or "" when --fail-above is off.
std::string fail_above_text(const diff_result& d) {
  if (d.settings.fail_above < 0) return "";
  const std::string limit = "fail-above " + format_threshold(d.settings.fail_above);
  return d.failed.empty() ? limit + ": passed" : limit + ": FAILED: " + failed_rows_text(d);
}

// The cells of one row, in the column order of table_header().
std::vector<std::string> row_cells(const diff_row& r) {
  return {r.name,
          r.quantity,
          count_text(r.calls_a),
          count_text(r.calls_b),
          r.calls_a ? format_duration(r.median_a) : "n/a",
          r.calls_b ? format_duration(r.median_b) : "n/a",
          format_change(r.change),
          format_duration(static_cast<double>(r.total_a)),
          format_duration(static_cast<double>(r.total_b)),
          format_duration(static_cast<double>(r.moved), true),
          format_p(r.test),
          format_effect(r.test.effect),
          verdict_text(r.verdict)};
}

std::vector<std::string> table_header() {
  return {"name", "quantity", "calls A", "calls B", "median A", "median B", "change",
          "total A", "total B", "moved", "p", "P(B>A)", "verdict"};
}

}  // namespace

std::string failed_rows_text(const diff_result& d) {
  std::string list;
  for (std::size_t i : d.failed) {
    const diff_row& r = d.rows[i];
    list += (list.empty() ? "" : ", ") + r.name + " (" + r.quantity + " " + format_change(r.change) + ", p " +
            format_p(r.test) + ")";
  }
  return std::to_string(d.failed.size()) + (d.failed.size() == 1 ? " row" : " rows") + " slower by more than " +
         format_threshold(d.settings.fail_above) + " with significance: " + list;
}

namespace {

// Cut `s` to `n` bytes ending in "...", not inside a UTF-8 sequence.
std::string shortened(const std::string& s, std::size_t n) {
  if (s.size() <= n || n < 4) return s;
  std::size_t keep = n - 3;
  while (keep > 0 && (static_cast<unsigned char>(s[keep]) & 0xC0) == 0x80) --keep;
  return s.substr(0, keep) + "...";
}

int table_width(int width) {
  if (width > 0) return width;
  const char* columns = std::getenv("COLUMNS");
  const int c = columns ? std::atoi(columns) : 0;
  return c >= 40 ? c : 120;
}

// Column widths; the name column gives way (down to 16) when the table would pass `width`.
std::vector<std::size_t> column_widths(std::vector<std::vector<std::string>>& table, int width) {
  std::vector<std::size_t> w(table[0].size(), 0);
  for (const auto& row : table)
    for (std::size_t c = 0; c < row.size(); ++c) w[c] = std::max(w[c], row[c].size());
  std::size_t total = 2 * (w.size() - 1);
  for (std::size_t x : w) total += x;
  const auto limit = static_cast<std::size_t>(table_width(width));
  if (total > limit && w[0] > 16) {
    const std::size_t excess = total - limit;
    w[0] = excess < w[0] - 16 ? w[0] - excess : 16;
    for (auto& row : table) row[0] = shortened(row[0], w[0]);
  }
  return w;
}

void write_text_table(std::vector<std::vector<std::string>> table, std::ostream& out, int width) {
  const auto w = column_widths(table, width);
  for (const auto& row : table) {
    std::string line;
    for (std::size_t c = 0; c < row.size(); ++c) {
      const std::string pad(w[c] - std::min(w[c], row[c].size()), ' ');
      const bool left = c == 0 || c == 1 || c + 1 == row.size();  // words left, numbers right
      line += (c ? "  " : "") + (left ? row[c] + pad : pad + row[c]);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << "\n";
  }
}

}  // namespace

void write_diff_text(const diff_result& d, std::ostream& out, int width) {
  out << "scopeprof diff: " << verdict_counts(d) << "\n";
  out << "  A: " << side_text(d.a) << "\n  B: " << side_text(d.b) << "\n";
  out << "  method: " << method_text(d.settings) << "\n";
  if (const std::string f = fail_above_text(d); !f.empty()) out << "  " << f << "\n";
  out << "\n";
  std::vector<std::vector<std::string>> table{table_header()};
  for (const auto& r : d.rows) table.push_back(row_cells(r));
  write_text_table(std::move(table), out, width);
  write_work_text(d, out);
  out << "\nNote: " << tree_note << "\n";
}

namespace {

// Markdown-escape text for a table cell (a '|' would split the cell, '*' '_' '`' would format).
std::string md_cell(const std::string& s) {
  std::string e;
  for (char c : s) {
    if (std::string("\\`*_|<>[]").find(c) != std::string::npos) e += '\\';
    e += c == '\n' ? ' ' : c;
  }
  return e;
}

// "**scopeprof diff: FAILED** 1 slower, 3 same: 1 row slower by more than 5% ...", or "passed" (with
// --fail-above), or just the counts.
std::string md_verdict_line(const diff_result& d) {
  const bool gate = d.settings.fail_above >= 0;
  std::string line = "**scopeprof diff:";
  if (gate) line += d.failed.empty() ? " passed" : " FAILED";
  line += "** " + md_cell(verdict_counts(d));
  if (!d.failed.empty())
    line += "; " + md_cell(failed_rows_text(d));
  else if (gate)
    line += " (fail-above " + format_threshold(d.settings.fail_above) + ")";
  return line;
}

}  // namespace

void write_diff_markdown(const diff_result& d, std::ostream& out) {
  out << md_verdict_line(d) << "\n\n";
  out << "A: " << md_cell(side_text(d.a)) << "  \nB: " << md_cell(side_text(d.b)) << "  \n";
  out << "Method: " << md_cell(method_text(d.settings)) << "\n\n";
  const auto header = table_header();
  std::string head = "|", rule = "|";
  for (std::size_t c = 0; c < header.size(); ++c) {
    head += " " + header[c] + " |";
    rule += (c == 0 || c == 1 || c + 1 == header.size()) ? " --- |" : " ---: |";
  }
  out << head << "\n" << rule << "\n";
  for (const auto& r : d.rows) {
    std::string line = "|";
    for (const auto& cell : row_cells(r)) line += " " + md_cell(cell) + " |";
    out << line << "\n";
  }
  write_work_markdown(d, out);
  out << "\n" << tree_note << "\n";
}

namespace {

nlohmann::ordered_json number_or_null(double v) { return std::isfinite(v) ? nlohmann::ordered_json(v) : nlohmann::ordered_json(); }

nlohmann::ordered_json ns_or_null(std::uint64_t calls, double median) {
  return calls ? nlohmann::ordered_json(static_cast<std::int64_t>(std::llround(median))) : nlohmann::ordered_json();
}

nlohmann::ordered_json side_json(const diff_side& s) {
  return {{"path", s.path}, {"program", s.program}, {"rank", s.rank}, {"host", s.host}};
}

nlohmann::ordered_json row_json(const diff_row& r) {
  const bool tested = r.test.tested;
  return {{"name", r.name},
          {"quantity", r.quantity},
          {"calls_a", r.calls_a},
          {"calls_b", r.calls_b},
          {"median_a", ns_or_null(r.calls_a, r.median_a)},
          {"median_b", ns_or_null(r.calls_b, r.median_b)},
          {"change", number_or_null(r.change)},
          {"total_a", r.total_a},
          {"total_b", r.total_b},
          {"moved", r.moved},
          {"u", tested ? nlohmann::ordered_json(r.test.u) : nlohmann::ordered_json()},
          {"z", tested ? nlohmann::ordered_json(r.test.z) : nlohmann::ordered_json()},
          {"p", tested ? number_or_null(r.test.p_value) : nlohmann::ordered_json()},
          {"effect", number_or_null(r.test.effect)},
          {"verdict", verdict_text(r.verdict)},
          {"failed", r.failed}};
}

}  // namespace

void write_diff_json(const diff_result& d, std::ostream& out) {
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const auto& r : d.rows) rows.push_back(row_json(r));
  nlohmann::ordered_json failed = nlohmann::ordered_json::array();
  for (std::size_t i : d.failed) failed.push_back({{"name", d.rows[i].name}, {"quantity", d.rows[i].quantity}});
  const nlohmann::ordered_json doc = {
      {"schema", diff_schema},
      {"units", "ns"},
      {"a", side_json(d.a)},
      {"b", side_json(d.b)},
      {"method", diff_method},
      {"alpha", d.settings.alpha},
      {"min_change", d.settings.min_change},
      {"fail_above", d.settings.fail_above >= 0 ? nlohmann::ordered_json(d.settings.fail_above) : nlohmann::ordered_json()},
      {"failed", failed},
      {"rows", rows},
      {"work", work_json(d)},
      {"note", tree_note}};
  // Scope names are arbitrary bytes: replace invalid UTF-8 rather than throw.
  out << doc.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << "\n";
}

}  // namespace scopeprof_cli
