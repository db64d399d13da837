// Checks shared by the writer tests and the fuzz target. Each check_* returns an empty string when the
// output is valid and agrees with the report it came from, else a description of the first problem.
#pragma once

#include "csv_check.hpp"
#include "json_check.hpp"
#include "speedscope_check.hpp"

#include "internals.hpp"  // the umbrella (the CPU suite also builds against single_include/), and raw_snapshot

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace sptest {

/// Offset of the first byte that is not valid UTF-8, or npos. Uses the library's own decoder.
inline std::size_t first_invalid_utf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = scopeprof::detail::utf8_sequence_length(s, i);
    if (n == 0) return i;
    i += n;
  }
  return std::string_view::npos;
}
inline bool valid_utf8(std::string_view s) { return first_invalid_utf8(s) == std::string_view::npos; }

inline std::string site_name(const scopeprof::report& r, const scopeprof::scope_instance& s) {
  return s.site < r.sites().size() ? r.sites()[s.site].name : std::string();
}

/// "-?D+.DDD" (microseconds with exactly three decimals) as integer nanoseconds.
inline bool parse_us3(std::string_view lit, std::int64_t& ns) {
  const bool neg = !lit.empty() && lit[0] == '-';
  if (neg) lit.remove_prefix(1);
  const std::size_t dot = lit.find('.');
  if (dot == std::string_view::npos || dot == 0 || lit.size() - dot != 4) return false;
  std::int64_t v = 0;
  for (std::size_t i = 0; i < lit.size(); ++i) {
    if (i == dot) continue;
    if (lit[i] < '0' || lit[i] > '9') return false;
    if (v > (INT64_MAX - 9) / 10) return false;
    v = v * 10 + (lit[i] - '0');
  }
  ns = neg ? -v : v;
  return true;
}

/// Every instance is well-formed: end >= begin, a parent comes before its children, children lie inside
/// their parent on the same thread one level deeper, orphans are roots.
inline std::string check_instances(const scopeprof::report& r) {
  const auto& in = r.instances();
  std::uint64_t orphans = 0;
  for (std::size_t i = 0; i < in.size(); ++i) {
    const auto& s = in[i];
    std::ostringstream e;
    e << "instance " << i << ": ";
    if (s.host_end_ns < s.host_begin_ns) return e.str() + "ends before it begins";
    if (s.site >= r.sites().size()) return e.str() + "site index out of range";
    if (s.thread >= r.threads().size()) return e.str() + "thread index out of range";
    if (s.orphan) ++orphans;
    if (s.parent < 0) {
      if (s.parent != -1) return e.str() + "negative parent other than -1";
      if (s.depth != 0) return e.str() + "a root with depth != 0";
      continue;
    }
    if (s.orphan) return e.str() + "an orphan with a parent";
    if (static_cast<std::size_t>(s.parent) >= i) return e.str() + "parent index not before its own";
    const auto& p = in[static_cast<std::size_t>(s.parent)];
    if (p.thread != s.thread) return e.str() + "parent on another thread";
    if (s.depth != p.depth + 1) return e.str() + "depth is not parent depth + 1";
    if (s.host_begin_ns < p.host_begin_ns || s.host_end_ns > p.host_end_ns) return e.str() + "not inside its parent";
  }
  // The tables' count; the timeline's instances match it when it kept every scope (else a kept scope's
  // parent may be one it left out).
  if (r.timeline().left_out == 0 && orphans != r.orphan_count()) return "orphan_count() does not match the orphan instances";
  return {};
}

inline std::string check_csv(const scopeprof::report& r, const std::string& text) {
  if (!valid_utf8(text)) return "CSV is not valid UTF-8";
  csv_rows rows;
  std::string err;
  if (!parse_csv(text, rows, err)) return "CSV does not parse: " + err;
  if (rows.empty() || rows[0].empty() || rows[0][0] != "view") return "CSV has no header";
  const int view = 0, name = csv_column(rows, "name"), value = csv_column(rows, "value"),
            calls = csv_column(rows, "calls");
  if (name < 0 || value < 0 || calls < 0) return "CSV header lacks name/value/calls";
  std::map<std::string, std::string> meta;
  std::vector<const std::vector<std::string>*> flat, tree, kernel;
  for (std::size_t i = 1; i < rows.size(); ++i) {
    const auto& row = rows[i];
    if (row[view] == "meta") meta[row[name]] = row[value];
    else if (row[view] == "flat") flat.push_back(&row);
    else if (row[view] == "tree") tree.push_back(&row);
    else if (row[view] == "kernel") kernel.push_back(&row);
    else return "CSV row " + std::to_string(i) + " has view '" + row[view] + "'";
  }
  const auto& c = r.counts();
  if (meta["entered"] != std::to_string(c.entered) || meta["recorded"] != std::to_string(c.recorded) ||
      meta["dropped"] != std::to_string(c.dropped) || meta["in_flight"] != std::to_string(c.in_flight))
    return "CSV meta counts differ from the report";
  if (meta["host_source"] != scopeprof::detail::to_valid_utf8(r.sources().host)) return "CSV host_source differs";
  if (flat.size() != r.flat().size()) return "CSV flat row count differs";
  if (tree.size() != r.tree().size()) return "CSV tree row count differs";
  for (std::size_t i = 0; i < flat.size(); ++i) {
    if ((*flat[i])[name] != scopeprof::detail::to_valid_utf8(r.flat()[i].name))
      return "CSV flat row " + std::to_string(i) + " name differs";
    if ((*flat[i])[calls] != std::to_string(r.flat()[i].calls)) return "CSV flat calls differ";
  }
  for (std::size_t i = 0; i < tree.size(); ++i) {
    if ((*tree[i])[name] != scopeprof::detail::to_valid_utf8(r.tree()[i].name))
      return "CSV tree row " + std::to_string(i) + " name differs";
    if ((*tree[i])[calls] != std::to_string(r.tree()[i].calls)) return "CSV tree calls differ";
  }
  if (kernel.size() != r.kernel_summary().size()) return "CSV kernel row count differs";
  for (std::size_t i = 0; i < kernel.size(); ++i)
    if ((*kernel[i])[name] != scopeprof::detail::to_valid_utf8(r.kernel_summary()[i].kernel) ||
        (*kernel[i])[value] != scopeprof::detail::to_valid_utf8(r.kernel_summary()[i].scope))
      return "CSV kernel row " + std::to_string(i) + " names differ";
  const int cupti_status = csv_column(rows, "cupti_status");
  if (cupti_status < 0) return "CSV header lacks cupti_status";
  for (const auto* row : flat)
    if ((*row)[static_cast<std::size_t>(cupti_status)] != scopeprof::cupti_status_text(r.sources()))
      return "CSV cupti_status differs from the evidence";
  return {};
}

inline bool json_int_is(const json* v, std::uint64_t expected) {
  std::int64_t x;
  return v != nullptr && v->integer(x) && x >= 0 && static_cast<std::uint64_t>(x) == expected;
}

inline std::string check_counts_object(const json* o, const scopeprof::scope_counts& c, const char* where) {
  if (o == nullptr || !o->is(json::type::object)) return std::string(where) + ": no counts object";
  if (!json_int_is(o->find("entered"), c.entered) || !json_int_is(o->find("recorded"), c.recorded) ||
      !json_int_is(o->find("dropped"), c.dropped) || !json_int_is(o->find("in_flight"), c.in_flight))
    return std::string(where) + ": counts differ from the report";
  return {};
}

/// The "process" object of the JSON report (and of speedscope's "scopeprof" member) against report::process().
inline std::string check_process_object(const json* o, const scopeprof::process_desc& p, const char* where) {
  const std::string w(where);
  if (o == nullptr || !o->is(json::type::object)) return w + ": no process object";
  if (!json_int_is(o->find("rank"), static_cast<std::uint64_t>(p.rank)) ||
      !json_int_is(o->find("world_size"), static_cast<std::uint64_t>(p.world_size)) ||
      !json_int_is(o->find("local_rank"), static_cast<std::uint64_t>(p.local_rank)) ||
      !json_int_is(o->find("pid"), static_cast<std::uint64_t>(p.pid)))
    return w + ": process numbers differ from the report";
  const json* host = o->find("host");
  const json* source = o->find("rank_source");
  if (!host || host->text != scopeprof::detail::to_valid_utf8(p.host) || !source ||
      source->text != scopeprof::detail::to_valid_utf8(p.rank_source))
    return w + ": process host or rank source differs";
  const json* program = o->find("program");
  if (!program || program->text != scopeprof::detail::to_valid_utf8(p.program)) return w + ": process program differs";
  const json* base = o->find("base_unix_ns");
  if (!base || (p.base_unix_ns == 0 ? !base->is(json::type::null)
                                     : !json_int_is(base, static_cast<std::uint64_t>(p.base_unix_ns))))
    return w + ": base_unix_ns differs";
  const json* devices = o->find("devices");
  if (!devices || !devices->is(json::type::array) || devices->items.size() != p.devices.size())
    return w + ": devices differ";
  for (std::size_t i = 0; i < p.devices.size(); ++i)
    if (!json_int_is(&devices->items[i], static_cast<std::uint64_t>(p.devices[i]))) return w + ": device ids differ";
  return {};
}

inline std::string check_json(const scopeprof::report& r, const std::string& text) {
  if (!valid_utf8(text)) return "JSON is not valid UTF-8";
  json doc;
  std::string err;
  if (!parse_json(text, doc, err)) return "JSON does not parse: " + err;
  const json* schema = doc.find("schema");
  if (schema == nullptr || schema->text != "scopeprof-report/1") return "JSON schema missing";
  if (auto e = check_counts_object(doc.find("counts"), r.counts(), "JSON"); !e.empty()) return e;
  if (auto e = check_process_object(doc.find("process"), r.process(), "JSON"); !e.empty()) return e;
  if (!json_int_is(doc.find("orphans"), r.orphan_count())) return "JSON orphans differ";
  const json* threads = doc.find("threads");
  const json* flat = doc.find("flat");
  const json* tree = doc.find("tree");
  if (!threads || !threads->is(json::type::array) || threads->items.size() != r.threads().size())
    return "JSON threads differ";
  for (std::size_t i = 0; i < threads->items.size(); ++i) {
    const json& t = threads->items[i];
    const json* n = t.find("name");
    if (!n || n->text != scopeprof::detail::to_valid_utf8(r.threads()[i].name)) return "JSON thread name differs";
    if (auto e = check_counts_object(t.find("counts"), r.threads()[i].counts, "JSON thread"); !e.empty()) return e;
  }
  if (!flat || !flat->is(json::type::array) || flat->items.size() != r.flat().size()) return "JSON flat differs";
  for (std::size_t i = 0; i < flat->items.size(); ++i) {
    const json& f = flat->items[i];
    const json* n = f.find("name");
    if (!n || !n->is(json::type::string) || n->text != scopeprof::detail::to_valid_utf8(r.flat()[i].name))
      return "JSON flat row " + std::to_string(i) + " name differs";
    if (!json_int_is(f.find("calls"), r.flat()[i].calls)) return "JSON flat calls differ";
  }
  if (!tree || !tree->is(json::type::array) || tree->items.size() != r.tree().size()) return "JSON tree differs";
  for (std::size_t i = 0; i < tree->items.size(); ++i) {
    const json* n = tree->items[i].find("name");
    if (!n || n->text != scopeprof::detail::to_valid_utf8(r.tree()[i].name)) return "JSON tree name differs";
    std::int64_t parent;
    const json* p = tree->items[i].find("parent");
    if (!p || !p->integer(parent) || parent < -1 || parent >= static_cast<std::int64_t>(i))
      return "JSON tree parent out of range";
    const json* cupti = tree->items[i].find("cupti");
    if (!cupti || cupti->is(json::type::null) == r.sources().cupti_valid) return "JSON tree cupti cell wrong for the evidence";
    if (r.sources().cupti_valid && !json_int_is(cupti->find("kernels"), r.tree()[i].kernels)) return "JSON tree kernels differ";
  }
  const json* kern = doc.find("kernel_summary");
  if (!kern || !kern->is(json::type::array) || kern->items.size() != r.kernel_summary().size())
    return "JSON kernel_summary differs";
  for (std::size_t i = 0; i < kern->items.size(); ++i) {
    const json* n = kern->items[i].find("name");
    const json* sc = kern->items[i].find("scope");
    if (!n || n->text != scopeprof::detail::to_valid_utf8(r.kernel_summary()[i].kernel) || !sc ||
        sc->text != scopeprof::detail::to_valid_utf8(r.kernel_summary()[i].scope))
      return "JSON kernel_summary row " + std::to_string(i) + " names differ";
    if (!json_int_is(kern->items[i].find("instances"), r.kernel_summary()[i].time.count)) return "JSON kernel instances differ";
  }
  return {};
}

/// The Chrome trace agrees with its report and with every viewer's rules (defined in trace_check.hpp).
inline std::string check_chrome_trace(const scopeprof::report& r, const std::string& text);

inline std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  for (std::size_t i = 0; i < text.size(); ++i)
    if (text[i] == '\n') {
      lines.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  if (start < text.size()) lines.push_back(text.substr(start));
  return lines;
}

/// Text tables: valid UTF-8, no CR anywhere, and each table has one line per row, all of the table's width.
inline std::string check_table(const scopeprof::report& r, const std::string& text) {
  using scopeprof::detail::display_name;
  using scopeprof::detail::display_width;
  if (!valid_utf8(text)) return "table is not valid UTF-8";
  if (text.find('\r') != std::string::npos) return "table holds a CR";
  const auto lines = split_lines(text);
  if (r.tree().empty() && r.flat().empty()) {
    for (const auto& l : lines)
      if (l == "(no finished scopes)") return {};
    return "empty report without '(no finished scopes)'";
  }
  const auto section = [&](const char* title, std::size_t rows, auto expected_start) -> std::string {
    // The title line is the first one that starts with the title and has a dash line two lines below
    // (a row whose name mimics the title cannot: rows hold numbers).
    const auto is_dashes = [](const std::string& l) { return !l.empty() && l.find_first_not_of('-') == std::string::npos; };
    std::size_t i = 0;
    while (i < lines.size() && !(lines[i].rfind(title, 0) == 0 && i + 2 < lines.size() && is_dashes(lines[i + 2]))) ++i;
    if (i + 2 >= lines.size()) return std::string("no '") + title + "' table";
    const std::string& header = lines[i + 1];
    const std::string& dashes = lines[i + 2];
    const std::size_t width = display_width(dashes);
    if (display_width(header) != width) return std::string("header of '") + title + "' is not as wide as its dashes";
    for (std::size_t k = 0; k < rows; ++k) {
      if (i + 3 + k >= lines.size()) return std::string("'") + title + "' has too few rows";
      const std::string& line = lines[i + 3 + k];
      if (display_width(line) != width)
        return std::string("row ") + std::to_string(k) + " of '" + title + "' is not as wide as the table: " + line;
      const std::string start = expected_start(k);
      if (line.compare(0, start.size(), start) != 0)
        return std::string("row ") + std::to_string(k) + " of '" + title + "' does not start with its name";
    }
    if (i + 3 + rows >= lines.size() || !lines[i + 3 + rows].empty())
      return std::string("'") + title + "' has more lines than rows";
    return {};
  };
  if (auto e = section("Call tree (", r.tree().size(),
                       [&](std::size_t k) {
                         return std::string(2 * r.tree()[k].depth, ' ') + display_name(r.tree()[k].name);
                       });
      !e.empty())
    return e;
  return section("By name (", r.flat().size(), [&](std::size_t k) { return display_name(r.flat()[k].name); });
}

/// All five outputs of a report, plus the instance invariants.
inline std::string check_all_outputs(const scopeprof::report& r) {
  if (auto e = check_instances(r); !e.empty()) return e;
  if (auto e = check_table(r, r.to_string()); !e.empty()) return e;
  if (auto e = check_csv(r, r.csv()); !e.empty()) return e;
  if (auto e = check_json(r, r.json()); !e.empty()) return e;
  if (auto e = check_speedscope(r, r.speedscope()); !e.empty()) return e;
  return check_chrome_trace(r, r.chrome_trace());
}

}  // namespace sptest

#include "trace_check.hpp"  // check_chrome_trace(), which uses the checks above
