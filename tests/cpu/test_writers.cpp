// Writers: text table, CSV (RFC 4180), JSON and Chrome trace stay valid UTF-8 and parse strictly for any
// scope name, from real scopes and from synthetic snapshots; the trace's host events nest exactly.
#include "output_check.hpp"

#include "internals.hpp"
#include "raw_builders.hpp"

#include <doctest/doctest.h>

#include "timing_check.hpp"

#include <chrono>
#include <string>
#include <thread>
#include <vector>
#include "doctest_checks.hpp"  // last: doctest's CHECK, not glog's (unity build)

namespace {

using namespace std::string_literals;

const std::string fffd = "\xEF\xBF\xBD";

std::string repeat(const std::string& s, std::size_t n) {
  std::string out;
  for (std::size_t i = 0; i < n; ++i) out += s;
  return out;
}

// Each name as a scope, nested in itself (recursion), then all of them nested in one chain.
void run_named_scopes(const std::vector<std::string>& names, std::size_t from = 0) {
  if (from == 0)
    for (const auto& n : names) {
      PROF_SCOPE_DYN(n);
      { PROF_SCOPE_DYN(n); }
    }
  if (from == names.size()) return;
  PROF_SCOPE_DYN(names[from]);
  run_named_scopes(names, from + 1);
}

const sptest::json* find_named(const sptest::json& array, const std::string& name) {
  for (const auto& item : array.items) {
    const sptest::json* n = item.find("name");
    if (n != nullptr && n->text == name) return &item;
  }
  return nullptr;
}

const std::vector<std::string>* find_csv_row(const sptest::csv_rows& rows, const std::string& view,
                                             const std::string& name) {
  const int name_col = sptest::csv_column(rows, "name");
  for (const auto& row : rows)
    if (row[0] == view && row[static_cast<std::size_t>(name_col)] == name) return &row;
  return nullptr;
}

// The name shows in the JSON flat table, the CSV flat rows and the trace as `expected` (the UTF-8 the
// writers must produce), and in the text table as `shown`.
void expect_name_everywhere(const scopeprof::report& r, const std::string& expected, const std::string& shown) {
  sptest::json doc;
  std::string err;
  REQUIRE_MESSAGE(sptest::parse_json(r.json(), doc, err), err);
  CHECK_MESSAGE(find_named(*doc.find("flat"), expected) != nullptr, "JSON flat lacks " << shown);
  sptest::csv_rows rows;
  REQUIRE_MESSAGE(sptest::parse_csv(r.csv(), rows, err), err);
  CHECK_MESSAGE(find_csv_row(rows, "flat", expected) != nullptr, "CSV flat lacks " << shown);
  sptest::json trace;
  REQUIRE_MESSAGE(sptest::parse_json(r.chrome_trace(), trace, err), err);
  CHECK_MESSAGE(find_named(*trace.find("traceEvents"), expected) != nullptr, "trace lacks " << shown);
  const std::string table = r.to_string();
  bool row_found = false;
  for (const auto& line : sptest::split_lines(table)) row_found = row_found || line.rfind(shown + "  ", 0) == 0;
  CHECK_MESSAGE(row_found, "the flat table has no row starting with " << shown);
}

void check_outputs(const scopeprof::report& r) {
  const std::string problem = sptest::check_all_outputs(r);
  CHECK_MESSAGE(problem.empty(), problem);
}

}  // namespace

TEST_CASE("the test's strict CSV and JSON parsers reject malformed input") {
  sptest::csv_rows rows;
  std::string err;
  SUBCASE("CSV") {
    CHECK(sptest::parse_csv("a,b\r\n1,2\r\n", rows, err));
    CHECK(sptest::parse_csv("a,b\r\n\"x,\"\"y\"\"\r\nz\",2\r\n", rows, err));
    CHECK(rows.at(1).at(0) == "x,\"y\"\r\nz");
    CHECK_FALSE(sptest::parse_csv("a,b\n1,2\n", rows, err));          // LF rows
    CHECK_FALSE(sptest::parse_csv("a,b\r\n1,2", rows, err));          // no final CRLF
    CHECK_FALSE(sptest::parse_csv("a,b\r\n1,2,3\r\n", rows, err));    // column count
    CHECK_FALSE(sptest::parse_csv("a,b\r\n1\"x,2\r\n", rows, err));   // quote in unquoted field
    CHECK_FALSE(sptest::parse_csv("a,b\r\n\"1\"x,2\r\n", rows, err)); // text after closing quote
    CHECK_FALSE(sptest::parse_csv("a,b\r\n\"1,2\r\n", rows, err));    // unterminated quote
    CHECK_FALSE(sptest::parse_csv("a,b\r\n1\r2\r\n", rows, err));     // bare CR
    CHECK_FALSE(sptest::parse_csv("a,b\r\n1,", rows, err));
  }
  SUBCASE("JSON") {
    sptest::json j;
    CHECK(sptest::parse_json(R"({"a":[1,-2.5e3,true,null,"x\u00e9\ud83d\ude00"]})", j, err));
    CHECK(j.find("a")->items.at(4).text == "x\xC3\xA9\xF0\x9F\x98\x80");
    for (const char* bad : {"{\"a\":1,}", "[1,]", "[01]", "[1.]", "{\"a\":1,\"a\":2}", "\"\\ud800\"", "\"\\x41\"",
                            "\"a\tb\"", "{} x", "[", "'a'", "[1e]", "\"\xC0\xAF\"", "\"\xED\xA0\x80\"", "nul",
                            "[-]", "{\"a\" 1}", ""}) {
      CHECK_MESSAGE(!sptest::parse_json(bad, j, err), "accepted: " << bad);
    }
  }
  SUBCASE("microsecond strings") {
    std::int64_t ns = 0;
    CHECK(sptest::parse_us3("12.345", ns));
    CHECK(ns == 12345);
    CHECK(sptest::parse_us3("-0.001", ns));
    CHECK(ns == -1);
    CHECK_FALSE(sptest::parse_us3("12.34", ns));
    CHECK_FALSE(sptest::parse_us3("12", ns));
    CHECK_FALSE(sptest::parse_us3("1e3", ns));
  }
}

TEST_CASE("utf8_sequence_length accepts exactly the valid UTF-8 sequences") {
  // Compare with the test's own decoder on every 1- and 2-byte input and on 3- and 4-byte inputs built
  // from boundary bytes.
  const unsigned char edges[] = {0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2,
                                 0xDF, 0xE0, 0xED, 0xEF, 0xF0, 0xF4, 0xF5, 0xFF};
  std::size_t mismatches = 0;
  const auto compare = [&](const std::string& s) {
    std::uint32_t cp = 0;
    const std::size_t mine = sptest::detail_json::decode_utf8(s, 0, cp);
    const std::size_t theirs = scopeprof::detail::utf8_sequence_length(s, 0);
    if (mine != theirs && ++mismatches < 10) FAIL_CHECK("mismatch on bytes of length " << s.size());
  };
  for (unsigned a = 0; a < 256; ++a) {
    compare(std::string(1, static_cast<char>(a)));
    for (unsigned b = 0; b < 256; ++b) {
      compare(std::string{static_cast<char>(a), static_cast<char>(b)});
      for (unsigned char c : edges) {
        compare(std::string{static_cast<char>(a), static_cast<char>(b), static_cast<char>(c)});
        if (a >= 0xF0)
          for (unsigned char d : edges)
            compare(std::string{static_cast<char>(a), static_cast<char>(b), static_cast<char>(c), static_cast<char>(d)});
      }
    }
  }
  CHECK(mismatches == 0);
}

TEST_CASE("outputs stay valid for hostile scope names from real scopes") {
  scopeprof::reset();
  SUBCASE("quotes, backslashes, commas and spaces") {
    const std::vector<std::string> names = {"say \"hi\"", "back\\slash\\", "a,b,c", "\"", ",", "\"\"\"",
                                            " leading", "trailing ", "{\"json\":[1]}", "/slash/", "semi;colon"};
    run_named_scopes(names);
    const auto r = scopeprof::collect();
    check_outputs(r);
    for (const auto& n : names) expect_name_everywhere(r, n, n);
  }
  SUBCASE("CR, LF, tabs and NUL") {
    const std::vector<std::string> names = {"line1\nline2", "cr\rhere", "crlf\r\nx", "tab\there", "nul\0inside"s,
                                            "\0"s, "\n", "end\n"};
    run_named_scopes(names);
    const auto r = scopeprof::collect();
    check_outputs(r);
    for (const auto& n : names) expect_name_everywhere(r, n, scopeprof::detail::display_name(n));
    expect_name_everywhere(r, "nul\0inside"s, "nul\\x00inside");
    expect_name_everywhere(r, "line1\nline2", "line1\\nline2");
    expect_name_everywhere(r, "tab\there", "tab\\there");
  }
  SUBCASE("control bytes") {
    const std::string esc = "\x1b[31mred\x1b[0m", bell = "bell\x07", del = "del\x7f", c1 = "\x01\x02\x1f";
    run_named_scopes({esc, bell, del, c1});
    const auto r = scopeprof::collect();
    check_outputs(r);
    expect_name_everywhere(r, esc, "\\x1b[31mred\\x1b[0m");
    expect_name_everywhere(r, bell, "bell\\x07");
    expect_name_everywhere(r, del, "del\\x7f");
    expect_name_everywhere(r, c1, "\\x01\\x02\\x1f");
    const std::string table = r.to_string();
    CHECK(table.find('\x1b') == std::string::npos);
    CHECK(table.find('\x07') == std::string::npos);
  }
  SUBCASE("invalid UTF-8 becomes U+FFFD per bad byte; valid multi-byte text is kept") {
    struct named {
      std::string raw, expected;
    };
    const std::vector<named> cases = {
        {"lone\x80" "cont", "lone" + fffd + "cont"},
        {"\xBF\xBF", fffd + fffd},
        {"overlong\xC0\xAF", "overlong" + fffd + fffd},
        {"overlong3\xE0\x80\xAF", "overlong3" + fffd + fffd + fffd},
        {"surrogate\xED\xA0\x80", "surrogate" + fffd + fffd + fffd},
        {"lowsurrogate\xED\xBF\xBF", "lowsurrogate" + fffd + fffd + fffd},
        {"truncated\xF0\x9F\x98", "truncated" + fffd + fffd + fffd},
        {"truncated\xE2\x82" "mid", "truncated" + fffd + fffd + "mid"},
        {"toolarge\xF4\x90\x80\x80", "toolarge" + fffd + fffd + fffd + fffd},
        {"\xFF\xFE", fffd + fffd},
        {"caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80", "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80"},
    };
    std::vector<std::string> names;
    for (const auto& c : cases) names.push_back(c.raw);
    run_named_scopes(names);
    const auto r = scopeprof::collect();
    check_outputs(r);
    for (const auto& c : cases) expect_name_everywhere(r, c.expected, c.expected);
  }
  SUBCASE("very long names are cut at a UTF-8 boundary and end in '...'") {
    const std::size_t max = scopeprof::max_name_bytes;
    const std::vector<std::string> names = {std::string(max, 'a'), std::string(max + 1, 'b'),
                                            repeat("\xE2\x82\xAC", 300), repeat("\xF0\x9F\x98\x80", 200),
                                            "x" + repeat("\xC3\xA9", 400), std::string(100000, 'z')};
    run_named_scopes(names);
    const auto r = scopeprof::collect();
    check_outputs(r);
    for (const auto& n : names) {
      std::string shown = n;
      if (n.size() > max) {
        // Find the site whose name starts like this one.
        const scopeprof::site_desc* site = nullptr;
        for (const auto& s : r.sites())
          if (s.name.size() > 3 && n.compare(0, s.name.size() - 3, s.name, 0, s.name.size() - 3) == 0 &&
              s.name.compare(s.name.size() - 3, 3, "...") == 0)
            site = &s;
        REQUIRE_MESSAGE(site != nullptr, "no truncated site for a name of " << n.size() << " bytes");
        CHECK(site->name.size() <= max);
        CHECK(site->name.size() >= max - 3);  // cut no more than one sequence early
        CHECK(sptest::valid_utf8(site->name));
        shown = site->name;
      } else {
        CHECK(r.find(n) != nullptr);  // not cut
      }
      expect_name_everywhere(r, shown, shown);
    }
    // The euro signs (3 bytes) cannot end at byte 509: the cut backs up to 507 bytes.
    CHECK(r.find(repeat("\xE2\x82\xAC", 169) + "...") != nullptr);
    CHECK(r.find(std::string(max - 3, 'b') + "...") != nullptr);
  }
  SUBCASE("an empty name") {
    run_named_scopes({std::string(), "after empty"});
    const auto r = scopeprof::collect();
    check_outputs(r);
    REQUIRE(r.find("") != nullptr);
    CHECK(r.find("")->calls == 3);
    expect_name_everywhere(r, "", "");
  }
  SUBCASE("hostile thread names on several threads") {
    std::vector<std::thread> threads;
    const std::vector<std::string> thread_names = {"th\"read\n1", "th\x80read\\2", std::string(600, 't'), ""};
    for (const auto& tn : thread_names)
      threads.emplace_back([&tn] {
        scopeprof::set_thread_name(tn);
        run_named_scopes({"worker", "work,er\n"});
      });
    for (auto& t : threads) t.join();
    run_named_scopes({"main"});
    const auto r = scopeprof::collect();
    check_outputs(r);
    sptest::json doc;
    std::string err;
    REQUIRE(sptest::parse_json(r.json(), doc, err));
    std::size_t found = 0;
    for (const auto& t : doc.find("threads")->items)
      for (const auto& tn : thread_names)
        if (!tn.empty() && t.find("name")->text == scopeprof::detail::to_valid_utf8(scopeprof::detail::truncate_name(tn)))
          ++found;
    CHECK(found == 3);
  }
}

TEST_CASE("outputs stay valid for synthetic snapshots with hostile names and device spans") {
  using scopeprof::device_status;
  scopeprof::detail::raw_snapshot s;
  const std::vector<std::string> names = {"plain", "q\"uo,te\r\n", "\x80\xC0\xAF\xED\xA0\x80", "nul\0x"s, "",
                                          repeat("\xF0\x9F\x98\x80", 40)};
  for (const auto& n : names) s.sites.push_back({n, "file.cpp", "fn", 1});
  s.origin_ns = 1'000'000;
  s.sources.host = "synthetic, \"host\"";
  s.sources.device = "synthetic\ndevice";
  for (std::uint32_t t = 0; t < 2; ++t) {
    scopeprof::detail::raw_thread th;
    th.desc.index = t;
    th.desc.os_id = 100 + t;
    th.desc.name = t == 0 ? "main\t\"x\"" : "\xFF";
    const std::int64_t base = s.origin_ns + 10'000 * t;
    // post-order: (5 in (4 in 3)) ... built as 3[0,900] { 4[100,500] { 5[200,300] }, 0[600,650] }, 1[1000,1001]
    auto a = sptest::host_record(5, 2, base + 200, base + 300);
    a.device = device_status::ok;
    a.device_id = 0;
    a.stream = 7;
    a.device_begin_ns = base + 250;
    a.device_end_ns = base + 400;
    auto b = sptest::host_record(4, 1, base + 100, base + 500);
    b.device = device_status::captured;
    auto c = sptest::host_record(0, 1, base + 600, base + 650);
    c.device = device_status::invalid;
    auto d = sptest::host_record(3, 0, base + 0, base + 900);
    d.device = device_status::ok;
    d.device_id = 0;
    d.stream = 7;
    d.device_begin_ns = base + 240;
    d.device_end_ns = base + 1200;
    auto e = sptest::host_record(1 + t, 0, base + 1000, base + 1001);
    th.records = {a, b, c, d, e};
    th.desc.counts = {5, 5, 0, 0};
    s.threads.push_back(th);
  }
  s.counts = {10, 10, 0, 0};
  const auto r = scopeprof::detail::build_report(s);
  REQUIRE(r.instances().size() == 10);
  check_outputs(r);
  expect_name_everywhere(r, "q\"uo,te\r\n", "q\"uo,te\\r\\n");
  expect_name_everywhere(r, fffd + fffd + fffd + fffd + fffd + fffd, fffd + fffd + fffd + fffd + fffd + fffd);
  const std::string trace = r.chrome_trace();
  CHECK(trace.find("\"flow_out\":true") != std::string::npos);  // device spans get flow arrows
  CHECK(trace.find("\"flow_in\":true") != std::string::npos);
}

TEST_CASE("the Chrome trace names the track of every thread even when thread indexes are not positions") {
  // thread_desc::index is "the order in which threads first entered a scope"; a snapshot need not hold
  // every thread (e.g. once exited threads are forgotten), so indexes and positions can differ.
  scopeprof::detail::raw_snapshot s;
  s.sites.push_back({"work", "", "", 0});
  for (std::uint32_t index : {3u, 7u}) {
    scopeprof::detail::raw_thread th;
    th.desc.index = index;
    th.desc.counts = {1, 1, 0, 0};
    th.records = {sptest::host_record(0, 0, 100, 200)};
    s.threads.push_back(th);
  }
  s.counts = {2, 2, 0, 0};
  const auto r = scopeprof::detail::build_report(s);
  const std::string problem = sptest::check_chrome_trace(r, r.chrome_trace());
  CHECK_MESSAGE(problem.empty(), problem);
}

TEST_CASE("timing: a 30 ms parent with a 20 ms child has 10 ms of self time in CSV, JSON and trace") {
  const sptest::parent_child_run run = sptest::run_parent_child();
  CAPTURE(run.attempts);
  CAPTURE(run.parent_total_ns);
  CAPTURE(run.child_total_ns);
  const auto& r = run.report;
  check_outputs(r);
  std::string err;

  sptest::csv_rows rows;
  REQUIRE_MESSAGE(sptest::parse_csv(r.csv(), rows, err), err);
  const int self_col = sptest::csv_column(rows, "host_self_us");
  const int total_col = sptest::csv_column(rows, "host_total_us");
  REQUIRE(self_col >= 0);
  REQUIRE(total_col >= 0);
  const auto* parent_row = find_csv_row(rows, "flat", "parent");
  const auto* child_row = find_csv_row(rows, "flat", "child");
  REQUIRE(parent_row != nullptr);
  REQUIRE(child_row != nullptr);
  CHECK(std::stod(parent_row->at(static_cast<std::size_t>(self_col))) == doctest::Approx(10'000).epsilon(0.2));
  CHECK(std::stod(parent_row->at(static_cast<std::size_t>(total_col))) == doctest::Approx(30'000).epsilon(2.0 / 30));
  CHECK(std::stod(child_row->at(static_cast<std::size_t>(self_col))) == doctest::Approx(20'000).epsilon(0.1));
  const auto* tree_child = find_csv_row(rows, "tree", "child");
  REQUIRE(tree_child != nullptr);
  CHECK(tree_child->at(static_cast<std::size_t>(sptest::csv_column(rows, "parent"))) == "0");

  sptest::json doc;
  REQUIRE_MESSAGE(sptest::parse_json(r.json(), doc, err), err);
  const sptest::json* parent = find_named(*doc.find("flat"), "parent");
  REQUIRE(parent != nullptr);
  CHECK(parent->find("host")->find("self")->number() == doctest::Approx(10e6).epsilon(0.2));
  CHECK(parent->find("host")->find("total")->number() == doctest::Approx(30e6).epsilon(2.0 / 30));
  CHECK(parent->find("calls")->text == "1");

  sptest::json trace;
  REQUIRE_MESSAGE(sptest::parse_json(r.chrome_trace(), trace, err), err);
  std::size_t scope_slice = 0;  // scopeprofScopes row k holds the figures of the k-th scope slice
  const sptest::json* ev = nullptr;
  for (const auto& e : trace.find("traceEvents")->items) {
    if (!e.find("cat") || e.find("cat")->text != "user_annotation") continue;
    if (e.find("name")->text == "parent") {
      ev = &e;
      break;
    }
    ++scope_slice;
  }
  REQUIRE(ev != nullptr);
  const sptest::json& row = trace.find("scopeprofScopes")->find("rows")->items.at(scope_slice);
  std::int64_t self_ns = 0;
  REQUIRE(sptest::parse_us3(row.items.at(0).text, self_ns));
  CHECK(static_cast<double>(self_ns) == doctest::Approx(10e6).epsilon(0.2));
}
