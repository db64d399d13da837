// scopeprof tool: the text table and the Markdown document of a merged result (merge_output.hpp).
#include "merge_output.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace scopeprof_cli {

namespace {

constexpr std::size_t max_hosts_named = 8;
constexpr std::size_t min_name_width = 24;  // below this, device figures move to a table of their own

std::string printf_text(const char* fmt, double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, x);
  return buf;
}

/// Columns a string takes on a terminal: its UTF-8 code points (scope names may hold any text).
std::size_t display_width(const std::string& s) {
  return static_cast<std::size_t>(std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

/// The first `n` code points of `s`, never splitting one.
std::string first_code_points(const std::string& s, std::size_t n) {
  std::size_t seen = 0, i = 0;
  for (; i < s.size(); ++i) {
    if ((s[i] & 0xC0) != 0x80 && seen++ == n) break;
  }
  return s.substr(0, i);
}

std::string cut_to(const std::string& s, std::size_t width) {
  if (display_width(s) <= width) return s;
  if (width <= 3) return first_code_points(s, width);
  return first_code_points(s, width - 3) + "...";
}

std::string pad_right(const std::string& s, std::size_t width) {
  const std::size_t w = display_width(s);
  return w >= width ? s : s + std::string(width - w, ' ');
}

std::string pad_left(const std::string& s, std::size_t width) {
  const std::size_t w = display_width(s);
  return w >= width ? s : std::string(width - w, ' ') + s;
}

/// `text` broken at spaces into lines of at most `width` columns (a longer word is cut).
std::string wrapped(const std::string& text, std::size_t width) {
  std::istringstream words(text);
  std::string word, line, out;
  auto flush = [&] {
    if (!line.empty()) out += line + "\n";
    line.clear();
  };
  while (words >> word) {
    if (!line.empty() && display_width(line) + 1 + display_width(word) > width) flush();
    while (display_width(word) > width) {
      flush();
      out += first_code_points(word, width) + "\n";
      word = word.substr(first_code_points(word, width).size());
    }
    if (!word.empty()) line += (line.empty() ? "" : " ") + word;
  }
  flush();
  return out;
}

/// One column of figures: its header and one cell per node.
struct column {
  std::string header;
  std::vector<std::string> cells;
  std::size_t width = 0;
  std::string long_header;  ///< Markdown's header, where width does not matter ("" : header)
};

/// Columns under one title ("host total", "device span").
struct column_group {
  std::string title;
  std::vector<column> columns;
};

void fit(column& c) {
  c.width = display_width(c.header);
  for (const auto& s : c.cells) c.width = std::max(c.width, display_width(s));
}

column calls_column(const merged_result& m) {
  column c{"calls", {}, 0, ""};
  for (const auto& n : m.nodes) c.cells.push_back(std::to_string(n.calls));
  fit(c);
  return c;
}

/// min, median, max, straggler and imbalance of one quantity; "-" where a node has none.
column_group quantity_group(const merged_result& m, bool device) {
  column_group g{device ? "device span" : "host total",
                 {{"min", {}, 0, ""},
                  {"median", {}, 0, ""},
                  {"max", {}, 0, ""},
                  {"strag", {}, 0, "straggler"},
                  {"imbal", {}, 0, "imbalance"}}};
  for (const auto& n : m.nodes) {
    const quantity_stats& q = device ? n.device_total : n.host_total;
    const bool has = q.ranks > 0;
    g.columns[0].cells.push_back(has ? format_ns(static_cast<double>(q.min_ns)) : "-");
    g.columns[1].cells.push_back(has ? format_ns(q.median_ns) : "-");
    g.columns[2].cells.push_back(has ? format_ns(static_cast<double>(q.max_ns)) : "-");
    g.columns[3].cells.push_back(has ? std::to_string(q.straggler) : "-");
    g.columns[4].cells.push_back(has ? format_ratio(q.imbalance) : "-");
  }
  for (auto& c : g.columns) fit(c);
  return g;
}

/// A quantity with an SI prefix, 3 significant digits ("36.9G"); "-" for none.
std::string si_text(double v) {
  if (!(v >= 0) || !std::isfinite(v)) return "-";
  static const struct { double f; const char* p; } steps[] = {{1e15, "P"}, {1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}};
  for (const auto& s : steps)
    if (v >= s.f) return printf_text("%.3g", v / s.f) + s.p;
  return printf_text("%.3g", v);
}

/// Declared work: bytes and FLOPs summed over ranks, each rank's GB/s across ranks and the slowest rank,
/// and the median of each rank's TFLOP/s.
column_group work_group(const merged_result& m) {
  column_group g{"declared work",
                 {{"bytes", {}, 0, "bytes (sum)"},
                  {"FLOPs", {}, 0, "FLOPs (sum)"},
                  {"GB/s min", {}, 0, ""},
                  {"med", {}, 0, "GB/s median"},
                  {"max", {}, 0, "GB/s max"},
                  {"slow", {}, 0, "slowest rank"},
                  {"TFLOP/s med", {}, 0, "TFLOP/s median"}}};
  for (const auto& n : m.nodes) {
    const bool has = n.work.any(), bw = n.bytes_per_s.ranks > 0, fl = n.flops_per_s.ranks > 0;
    g.columns[0].cells.push_back(has ? si_text(n.work.bytes) : "-");
    g.columns[1].cells.push_back(has ? si_text(n.work.flops) : "-");
    g.columns[2].cells.push_back(bw ? printf_text("%.1f", n.bytes_per_s.min / 1e9) : "-");
    g.columns[3].cells.push_back(bw ? printf_text("%.1f", n.bytes_per_s.median / 1e9) : "-");
    g.columns[4].cells.push_back(bw ? printf_text("%.1f", n.bytes_per_s.max / 1e9) : "-");
    g.columns[5].cells.push_back(bw ? std::to_string(n.bytes_per_s.slowest) : fl ? std::to_string(n.flops_per_s.slowest) : "-");
    g.columns[6].cells.push_back(fl ? printf_text("%.3f", n.flops_per_s.median / 1e12) : "-");
  }
  for (auto& c : g.columns) fit(c);
  return g;
}

std::size_t span_of(const column_group& g) {
  std::size_t w = 0;
  for (const auto& c : g.columns) w += 1 + c.width;
  return w;
}

/// How many ranks have the node, when not all do.
std::string presence_suffix(const merged_result& m, const merged_node& n) {
  if (n.ranks_present >= m.world_size) return "";
  return " [" + std::to_string(n.ranks_present) + "/" + std::to_string(m.world_size) + " ranks]";
}

/// The name cell: indented by depth, the name cut with "..." so that the rank count still shows.
std::string name_cell(const merged_result& m, const merged_node& n, std::size_t width) {
  const std::size_t indent = std::min<std::size_t>(2 * static_cast<std::size_t>(n.depth), width / 2);
  const std::string suffix = presence_suffix(m, n);
  const std::size_t used = indent + display_width(suffix);
  if (used + 4 > width) return cut_to(std::string(indent, ' ') + n.name + suffix, width);
  return std::string(indent, ' ') + cut_to(n.name, width - used) + suffix;
}

/// "---- host total ----" over the group's columns.
std::string group_title(const column_group& g) {
  const std::size_t span = span_of(g) - 1;
  const std::string t = " " + g.title + " ";
  if (t.size() + 2 > span) return " " + pad_right(cut_to(g.title, span), span);
  const std::size_t left = (span - t.size()) / 2;
  return " " + std::string(left, '-') + t + std::string(span - t.size() - left, '-');
}

std::string table(const merged_result& m, const column& calls, const std::vector<column_group>& groups,
                  std::size_t width) {
  std::size_t numbers = 1 + calls.width;
  for (const auto& g : groups) numbers += span_of(g);
  const std::size_t name_width = width > numbers + 8 ? width - numbers : 8;
  std::string out = std::string(name_width + 1 + calls.width, ' ');
  for (const auto& g : groups) out += group_title(g);
  out += "\n" + pad_right("scope", name_width) + " " + pad_left(calls.header, calls.width);
  for (const auto& g : groups)
    for (const auto& c : g.columns) out += " " + pad_left(c.header, c.width);
  out += "\n" + std::string(name_width + numbers, '-') + "\n";
  for (std::size_t i = 0; i < m.nodes.size(); ++i) {
    out += pad_right(name_cell(m, m.nodes[i], name_width), name_width) + " " + pad_left(calls.cells[i], calls.width);
    for (const auto& g : groups)
      for (const auto& c : g.columns) out += " " + pad_left(c.cells[i], c.width);
    out += "\n";
  }
  return out;
}

std::size_t terminal_width(int width) {
  if (width <= 0) {
    const char* env = std::getenv("COLUMNS");
    width = env ? std::atoi(env) : 0;
    if (width <= 0) width = 120;
  }
  return static_cast<std::size_t>(std::max(width, 60));
}

std::string hosts_text(const merged_result& m) {
  std::string s;
  for (std::size_t i = 0; i < m.hosts.size() && i < max_hosts_named; ++i)
    s += (i ? ", " : "") + (m.hosts[i].empty() ? std::string("(unknown)") : m.hosts[i]);
  if (m.hosts.size() > max_hosts_named) s += " and " + std::to_string(m.hosts.size() - max_hosts_named) + " more";
  return s;
}

std::string program_text(const merged_result& m) { return m.program.empty() ? "(unknown)" : m.program; }

}  // namespace

std::string format_ns(double ns) {
  const double a = std::fabs(ns);
  if (a < 1e3) return printf_text("%.0fns", ns);
  const char* unit = a < 1e6 ? "us" : a < 1e9 ? "ms" : "s";
  const double scaled = ns / (a < 1e6 ? 1e3 : a < 1e9 ? 1e6 : 1e9);
  const double s = std::fabs(scaled);
  const char* fmt = s < 9.995 ? "%.2f" : s < 99.95 ? "%.1f" : "%.0f";
  return printf_text(fmt, scaled) + unit;
}

std::string format_ratio(double x) {
  const char* fmt = x < 9.995 ? "%.2fx" : x < 99.95 ? "%.1fx" : "%.0fx";
  return printf_text(fmt, x);
}

std::string merge_text(const merged_result& m, int width) {
  const std::size_t w = terminal_width(width);
  std::string out = wrapped("scopeprof merge: " + std::to_string(m.world_size) + " ranks of program " + program_text(m), w);
  out += wrapped("hosts: " + hosts_text(m), w);
  out += wrapped(merge_legend, w);
  out += "\n";
  const column calls = calls_column(m);
  const column_group host = quantity_group(m, false);
  // Declared work, when any: a table of its own (rates over each rank's own time; slow = lowest GB/s).
  const std::string work = m.any_work() ? "\n" + table(m, calls, {work_group(m)}, w) : std::string();
  if (!m.any_device()) return out + table(m, calls, {host}, w) + work;
  const column_group device = quantity_group(m, true);
  if (1 + calls.width + span_of(host) + span_of(device) + min_name_width <= w)
    return out + table(m, calls, {host, device}, w) + work;
  // Too narrow for both side by side: the device figures get a table of their own.
  return out + table(m, calls, {host}, w) + "\n" + table(m, calls, {device}, w) + work;
}

namespace {

/// A table cell of Markdown: the characters that would end the cell or start formatting escaped.
std::string md_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '|' || c == '\\' || c == '*' || c == '_' || c == '`' || c == '[' || c == ']') out += '\\';
    if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '\n' || c == '\r') out += ' ';
    else out += c;
  }
  return out;
}

std::string md_row(const std::vector<std::string>& cells) {
  std::string s = "|";
  for (const auto& c : cells) s += " " + c + " |";
  return s + "\n";
}

}  // namespace

std::string merge_markdown(const merged_result& m) {
  std::string out = "# scopeprof merge\n\n" + std::to_string(m.world_size) + " ranks of program " +
                    md_escape(program_text(m)) + "; hosts: " + md_escape(hosts_text(m)) + ".\n\n" + merge_legend + ".\n\n";
  const column calls = calls_column(m);
  std::vector<column_group> groups{quantity_group(m, false)};
  if (m.any_device()) groups.push_back(quantity_group(m, true));
  if (m.any_work()) groups.push_back(work_group(m));
  std::vector<std::string> header{"scope", "calls"}, rule{"---", "---:"};
  for (const auto& g : groups)
    for (const auto& c : g.columns) {
      header.push_back(g.title + " " + (c.long_header.empty() ? c.header : c.long_header));
      rule.push_back("---:");
    }
  out += md_row(header) + md_row(rule);
  for (std::size_t i = 0; i < m.nodes.size(); ++i) {
    std::string name;
    for (std::uint32_t d = 0; d < m.nodes[i].depth; ++d) name += "&nbsp;&nbsp;";
    std::vector<std::string> cells{name + md_escape(m.nodes[i].name + presence_suffix(m, m.nodes[i])), calls.cells[i]};
    for (const auto& g : groups)
      for (const auto& c : g.columns) cells.push_back(c.cells[i]);
    out += md_row(cells);
  }
  return out;
}

}  // namespace scopeprof_cli
