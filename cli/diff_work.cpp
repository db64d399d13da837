// scopeprof tool, `diff`: declared work (PROF_SCOPE_WORK, add_work) of the two runs side by side: each
// run's achieved GB/s and TFLOP/s over its own time, the change, and whether the runs declared the same
// work per call. The rows of diff.cpp carry the significance test; these are ratios of sums, shown as such.
#include "diff.hpp"

#include <scopeprof/work_rate.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <ostream>
#include <unordered_map>
#include <unordered_set>

namespace scopeprof_cli {

namespace {

constexpr double none = std::numeric_limits<double>::quiet_NaN();

constexpr const char* work_note =
    "Declared work: each run's declared bytes and FLOPs over its own device spans (host time where none was "
    "device-timed); a higher rate is faster. Ratios of sums, not tested; \"work differs\" marks a name whose "
    "runs declared different work per call.";

/// One run's side of a row: its basis, work per call and rates (a run that declared none: basis "").
void fill_side(const scopeprof::flat_row* row, std::string& basis, double& bytes_per_call, double& flops_per_call,
               double& bytes_per_s, double& flops_per_s) {
  bytes_per_s = flops_per_s = none;
  if (row == nullptr || !row->work.any()) return;
  const scopeprof::declared_work& w = row->work;
  const scopeprof::work_rate r = scopeprof::rate_of(w);
  basis = scopeprof::work_basis_text(r.basis);
  bytes_per_call = w.bytes / static_cast<double>(w.calls);
  flops_per_call = w.flops / static_cast<double>(w.calls);
  bytes_per_s = r.bytes_per_s;
  flops_per_s = r.flops_per_s;
}

/// a and b equal up to rounding of a sum of doubles.
bool same_amount(double a, double b) { return std::fabs(a - b) <= 1e-9 * std::fmax(std::fabs(a), std::fabs(b)); }

work_diff_row row_of(const std::string& name, const scopeprof::flat_row* a, const scopeprof::flat_row* b) {
  work_diff_row r;
  r.name = name;
  fill_side(a, r.basis_a, r.bytes_per_call_a, r.flops_per_call_a, r.bytes_per_s_a, r.flops_per_s_a);
  fill_side(b, r.basis_b, r.bytes_per_call_b, r.flops_per_call_b, r.bytes_per_s_b, r.flops_per_s_b);
  r.same_work = !r.basis_a.empty() && !r.basis_b.empty() && same_amount(r.bytes_per_call_a, r.bytes_per_call_b) &&
                same_amount(r.flops_per_call_a, r.flops_per_call_b);
  return r;
}

std::string fixed(const char* format, double v) {
  if (!std::isfinite(v)) return "n/a";
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

/// b / a - 1 as "+12.3%", "n/a" without both rates.
std::string rate_change(double a, double b) {
  if (!std::isfinite(a) || !std::isfinite(b) || a <= 0) return "n/a";
  return format_change(b / a - 1);
}

std::vector<std::string> cells_of(const work_diff_row& r) {
  const auto side = [](const std::string& basis) { return basis.empty() ? std::string("-") : basis; };
  const char* note = r.basis_a.empty() ? "only in B" : r.basis_b.empty() ? "only in A" : r.same_work ? "" : "work differs";
  return {r.name,
          side(r.basis_a) + "/" + side(r.basis_b),
          fixed("%.1f", r.bytes_per_s_a / 1e9),
          fixed("%.1f", r.bytes_per_s_b / 1e9),
          rate_change(r.bytes_per_s_a, r.bytes_per_s_b),
          fixed("%.3f", r.flops_per_s_a / 1e12),
          fixed("%.3f", r.flops_per_s_b / 1e12),
          rate_change(r.flops_per_s_a, r.flops_per_s_b),
          note};
}

const std::vector<std::string>& header() {
  static const std::vector<std::string> h{"name", "over A/B", "GB/s A", "GB/s B", "change", "TFLOP/s A", "TFLOP/s B",
                                          "change", "note"};
  return h;
}

nlohmann::ordered_json number_or_null(double v) { return std::isfinite(v) ? nlohmann::ordered_json(v) : nlohmann::ordered_json(); }

}  // namespace

std::vector<work_diff_row> compare_work(const scopeprof::report& a, const scopeprof::report& b) {
  std::unordered_map<std::string, const scopeprof::flat_row*> in_b;
  for (const auto& row : b.flat()) in_b.emplace(row.name, &row);
  std::vector<work_diff_row> rows;
  std::unordered_set<std::string> seen;
  for (const auto& ra : a.flat()) {
    seen.insert(ra.name);
    const auto it = in_b.find(ra.name);
    const scopeprof::flat_row* rb = it == in_b.end() ? nullptr : it->second;
    if (ra.work.any() || (rb != nullptr && rb->work.any())) rows.push_back(row_of(ra.name, &ra, rb));
  }
  for (const auto& rb : b.flat())
    if (!seen.count(rb.name) && rb.work.any()) rows.push_back(row_of(rb.name, nullptr, &rb));
  return rows;
}

void write_work_text(const diff_result& d, std::ostream& out) {
  if (d.work.empty()) return;
  std::vector<std::vector<std::string>> table{header()};
  for (const auto& r : d.work) table.push_back(cells_of(r));
  std::vector<std::size_t> w(header().size(), 0);
  for (const auto& row : table)
    for (std::size_t c = 0; c < row.size(); ++c) w[c] = std::max(w[c], row[c].size());
  out << "\nDeclared work\n";
  for (const auto& row : table) {
    std::string line;
    for (std::size_t c = 0; c < row.size(); ++c) {
      const std::string pad(w[c] - row[c].size(), ' ');
      const bool left = c <= 1 || c + 1 == row.size();
      line += (c ? "  " : "") + (left ? row[c] + pad : pad + row[c]);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << "\n";
  }
  out << work_note << "\n";
}

void write_work_markdown(const diff_result& d, std::ostream& out) {
  if (d.work.empty()) return;
  const auto cell = [](const std::string& s) {
    std::string e;
    for (char c : s) {
      if (std::string("\\`*_|<>[]").find(c) != std::string::npos) e += '\\';
      e += c == '\n' ? ' ' : c;
    }
    return e;
  };
  out << "\n**Declared work**\n\n|";
  std::string rule = "|";
  for (std::size_t c = 0; c < header().size(); ++c) {
    out << " " << header()[c] << " |";
    rule += c <= 1 || c + 1 == header().size() ? " --- |" : " ---: |";
  }
  out << "\n" << rule << "\n";
  for (const auto& r : d.work) {
    out << "|";
    for (const auto& c : cells_of(r)) out << " " << cell(c) << " |";
    out << "\n";
  }
  out << "\n" << work_note << "\n";
}

nlohmann::ordered_json work_json(const diff_result& d) {
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const auto& r : d.work) {
    const auto side = [](const std::string& basis, double bpc, double fpc, double bps, double fps) {
      if (basis.empty()) return nlohmann::ordered_json();
      return nlohmann::ordered_json{{"basis", basis},
                                    {"bytes_per_call", bpc},
                                    {"flops_per_call", fpc},
                                    {"bytes_per_s", number_or_null(bps)},
                                    {"flops_per_s", number_or_null(fps)}};
    };
    rows.push_back({{"name", r.name},
                    {"a", side(r.basis_a, r.bytes_per_call_a, r.flops_per_call_a, r.bytes_per_s_a, r.flops_per_s_a)},
                    {"b", side(r.basis_b, r.bytes_per_call_b, r.flops_per_call_b, r.bytes_per_s_b, r.flops_per_s_b)},
                    {"same_work", r.same_work}});
  }
  return rows;
}

}  // namespace scopeprof_cli
