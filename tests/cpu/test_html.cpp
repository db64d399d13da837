// The HTML report (report::html(), write_html(), SCOPEPROF_REPORT=*.html): its JSON data parses and agrees
// with the report, text from the report cannot become markup, the page refers to nothing outside itself,
// and failures are write_results with the path and the reason. (The page in a browser: tests/viewers.)
#include "gzip_check.hpp"
#include "json_check.hpp"
#include "output_check.hpp"

#include "internals.hpp"
#include "raw_builders.hpp"

#include <doctest/doctest.h>
#include "temp_files.hpp"  // after <scopeprof.hpp>: LibTorch's logging macros must not replace doctest's

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
#include "doctest_checks.hpp"  // last: doctest's CHECK, not glog's (unity build)

extern char** environ;

namespace {

using scopeprof::detail::raw_snapshot;
using sptest::device_timed;
using sptest::host_record;

const char* const data_open = "<script type=\"application/json\" id=\"scopeprof-data\">";

/// The page's JSON document, parsed; fails the test when it is missing or malformed.
sptest::json page_data(const std::string& html) {
  const std::size_t begin = html.find(data_open);
  REQUIRE(begin != std::string::npos);
  const std::size_t from = begin + std::strlen(data_open), end = html.find("</script>", from);
  REQUIRE(end != std::string::npos);
  sptest::json doc;
  std::string err;
  REQUIRE_MESSAGE(sptest::parse_json(html.substr(from, end - from), doc, err), err);
  return doc;
}

bool same_json(const sptest::json& a, const sptest::json& b) {
  if (a.t != b.t || a.b != b.b || a.text != b.text || a.items.size() != b.items.size() || a.members.size() != b.members.size())
    return false;
  for (std::size_t i = 0; i < a.items.size(); ++i)
    if (!same_json(a.items[i], b.items[i])) return false;
  for (std::size_t i = 0; i < a.members.size(); ++i)
    if (a.members[i].first != b.members[i].first || !same_json(a.members[i].second, b.members[i].second)) return false;
  return true;
}

std::int64_t integer(const sptest::json* j) {
  std::int64_t v = -1;
  REQUIRE(j != nullptr);
  REQUIRE_MESSAGE(j->integer(v), j->text);
  return v;
}

std::size_t count_of(const std::string& s, const std::string& part) {
  std::size_t n = 0;
  for (std::size_t at = s.find(part); at != std::string::npos; at = s.find(part, at + 1)) ++n;
  return n;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

/// One thread of `roots` roots ("step", 1 us apart, durations varying), each with a device-timed child
/// ("kernel") on every other step.
raw_snapshot steps_snapshot(std::size_t roots, std::int64_t origin) {
  raw_snapshot s;
  s.sites = {{"step", "a.cpp", "f", 1}, {"kernel", "a.cpp", "f", 2}};
  s.origin_ns = origin;
  s.threads.emplace_back();
  s.threads[0].desc.name = "main";
  auto& recs = s.threads[0].records;
  for (std::size_t i = 0; i < roots; ++i) {
    const std::int64_t b = origin + 1000 + static_cast<std::int64_t>(i) * 1000;
    const std::int64_t d = 100 + static_cast<std::int64_t>(i % 7) * 50;
    if (i % 2 == 0) recs.push_back(device_timed(host_record(1, 1, b + 10, b + 20), 0, 3, b + 30, b + 30 + d));
    recs.push_back(host_record(0, 0, b, b + d));
  }
  s.threads[0].desc.counts.entered = s.threads[0].desc.counts.recorded = recs.size();
  s.counts = s.threads[0].desc.counts;
  return s;
}

const sptest::json* histogram(const sptest::json& data, const std::string& name, const std::string& quantity) {
  for (const auto& h : data.find("histograms")->items)
    if (h.find("name")->text == name && h.find("quantity")->text == quantity) return &h;
  return nullptr;
}

/// The histogram's bins are contiguous, ascending, and hold exactly these durations.
void check_bins(const sptest::json& hist, const std::vector<std::int64_t>& values) {
  std::int64_t previous_hi = -1;
  std::uint64_t total = 0;
  for (const auto& bin : hist.find("bins")->items) {
    REQUIRE(bin.items.size() == 3);
    const std::int64_t lo = integer(&bin.items[0]), hi = integer(&bin.items[1]), n = integer(&bin.items[2]);
    CHECK(lo <= hi);
    CHECK(lo > previous_hi);
    CHECK(n > 0);
    previous_hi = hi;
    const auto inside = std::count_if(values.begin(), values.end(), [&](std::int64_t v) { return v >= lo && v <= hi; });
    CHECK_MESSAGE(inside == n, "bin [" << lo << ", " << hi << "]");
    total += static_cast<std::uint64_t>(n);
  }
  CHECK(total == values.size());
  CHECK(integer(hist.find("count")) == static_cast<std::int64_t>(values.size()));
}

}  // namespace

TEST_CASE("the HTML report's JSON data parses and agrees with the report") {
  const auto r = scopeprof::detail::build_report(steps_snapshot(40, 7'000'000'000'000'000'000));
  const std::string html = r.html();
  const sptest::json data = page_data(html);
  CHECK(data.find("schema")->text == "scopeprof-html/1");
  CHECK(data.find("generator")->text == "scopeprof " SCOPEPROF_VERSION_STRING);

  SUBCASE("the report inside is the JSON report") {
    sptest::json report_json;
    std::string err;
    REQUIRE(sptest::parse_json(r.json(), report_json, err));
    CHECK(same_json(*data.find("report"), report_json));
  }
  SUBCASE("histograms hold every instance's host total and device span") {
    std::vector<std::int64_t> step_host, kernel_host, kernel_device;
    for (const auto& in : r.instances()) {
      (in.site == 0 ? step_host : kernel_host).push_back(in.host_total_ns());
      if (in.device == scopeprof::device_status::ok) kernel_device.push_back(in.device_span_ns());
    }
    REQUIRE(histogram(data, "step", "host") != nullptr);
    REQUIRE(histogram(data, "kernel", "host") != nullptr);
    REQUIRE(histogram(data, "kernel", "device") != nullptr);
    CHECK(histogram(data, "step", "device") == nullptr);  // no device spans: no device histogram
    check_bins(*histogram(data, "step", "host"), step_host);
    check_bins(*histogram(data, "kernel", "host"), kernel_host);
    check_bins(*histogram(data, "kernel", "device"), kernel_device);
  }
  SUBCASE("root points are every root's start from the origin, host duration and site, in order") {
    const auto& threads = data.find("roots")->find("threads")->items;
    REQUIRE(threads.size() == 1);
    CHECK(threads[0].find("name")->text == "main");
    CHECK(integer(threads[0].find("roots")) == 40);
    CHECK(integer(threads[0].find("shown")) == 40);
    const auto& points = threads[0].find("points")->items;
    std::size_t k = 0;
    for (const auto& in : r.instances()) {
      if (in.parent >= 0) continue;
      REQUIRE(k < points.size());
      CHECK(integer(&points[k].items[0]) == in.host_begin_ns - r.origin_ns());
      CHECK(integer(&points[k].items[1]) == in.host_total_ns());
      CHECK(integer(&points[k].items[2]) == static_cast<std::int64_t>(in.site));
      ++k;
    }
    CHECK(k == points.size());
    CHECK(data.find("roots")->find("names")->items.at(0).text == "step");
  }
  SUBCASE("no ranks in a report of one process") { CHECK(data.find("ranks")->is(sptest::json::type::null)); }
}

TEST_CASE("the HTML report caps the root points per thread and keeps each group's shortest and longest") {
  raw_snapshot s = steps_snapshot(25'001, 0);
  auto& spike = s.threads[0].records[s.threads[0].records.size() / 2 + 1];  // a root near the middle
  REQUIRE(spike.depth == 0);
  spike.host_end_ns = spike.host_begin_ns + 900;  // still before the next root begins
  const auto r = scopeprof::detail::build_report(s);
  const sptest::json data = page_data(r.html());
  const std::int64_t cap = integer(data.find("limits")->find("root_points_per_thread"));
  const auto& thread = data.find("roots")->find("threads")->items.at(0);
  CHECK(integer(thread.find("roots")) == 25'001);
  const auto& points = thread.find("points")->items;
  CHECK(integer(thread.find("shown")) == static_cast<std::int64_t>(points.size()));
  CHECK(static_cast<std::int64_t>(points.size()) <= cap);
  CHECK(static_cast<std::int64_t>(points.size()) >= cap / 2);
  std::int64_t longest = 0, shortest = INT64_MAX, previous = -1;
  for (const auto& p : points) {
    CHECK(integer(&p.items[0]) > previous);  // in begin order
    previous = integer(&p.items[0]);
    longest = std::max(longest, integer(&p.items[1]));
    shortest = std::min(shortest, integer(&p.items[1]));
  }
  CHECK(longest == 900);
  CHECK(shortest == 100);
}

TEST_CASE("text from the report cannot become markup in the HTML report") {
  raw_snapshot s;
  const std::vector<std::string> names = {"</script><script>alert(1)</script>", "<!-- <script>", "a & b \"q\" 's' <b>",
                                          "ctl\x01\n\x7f", "\xCE\xB1\xCE\xB2 \xF0\x9F\x98\x80", "bad\xFF\xC0", "</SCRIPT >"};
  for (const auto& n : names) s.sites.push_back({n, "f.cpp", "f", 1});
  s.sources.host = "host <b>&amp;</b> \"clock\"";
  s.sources.device = "</script><img src=x onerror=alert(1)>";
  s.warnings = "scopeprof: warning: <script>alert(2)</script>\nsecond line &\n";
  s.threads.emplace_back();
  s.threads[0].desc.name = "</script>thread<script>";
  for (std::uint32_t i = 0; i < names.size(); ++i)
    s.threads[0].records.push_back(host_record(i, 0, 100 * i, 100 * i + 50));
  s.threads[0].desc.counts.entered = s.threads[0].desc.counts.recorded = names.size();
  s.counts = s.threads[0].desc.counts;
  const auto r = scopeprof::detail::build_report(s);
  const std::string html = r.html();
  const std::string low = lower(html);

  CHECK(sptest::valid_utf8(html));
  CHECK(count_of(low, "<script") == 2);   // the data and the script, nothing from the report
  CHECK(count_of(low, "</script") == 2);
  CHECK(count_of(low, "<!--") == 0);
  CHECK(count_of(low, "<img") == 0);
  // Each text in its escaped form: \u003c in the JSON, character references in the header.
  CHECK(html.find("\\u003c/script\\u003e\\u003cscript\\u003ealert(1)\\u003c/script\\u003e") != std::string::npos);
  CHECK(html.find("host &lt;b&gt;&amp;amp;&lt;/b&gt; &quot;clock&quot;") != std::string::npos);
  CHECK(html.find("&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;") != std::string::npos);
  CHECK(html.find("scopeprof: warning: &lt;script&gt;alert(2)&lt;/script&gt;\nsecond line &amp;") != std::string::npos);

  const sptest::json data = page_data(html);  // the names come back from the JSON as the report has them
  std::vector<std::string> flat;
  for (const auto& f : data.find("report")->find("flat")->items) flat.push_back(f.find("name")->text);
  for (const auto& site : r.sites())  // invalid UTF-8 reads back as U+FFFD, as in the JSON report
    CHECK(std::find(flat.begin(), flat.end(), scopeprof::detail::to_valid_utf8(site.name)) != flat.end());
  CHECK(std::find(flat.begin(), flat.end(), "</script><script>alert(1)</script>") != flat.end());
  CHECK(data.find("report")->find("evidence")->find("device")->text == s.sources.device);
  CHECK(data.find("roots")->find("threads")->items.at(0).find("name")->text == "</script>thread<script>");
}

TEST_CASE("the HTML report refers to nothing outside itself") {
  const auto r = scopeprof::detail::build_report(steps_snapshot(5, 1000));
  const std::string html = r.html();
  // Every src= or href= attribute value is a fragment or a data: URL.
  std::size_t attributes = 0;
  for (const char* attr : {" src=\"", " href=\"", " src='", " href='"}) {
    for (std::size_t at = lower(html).find(attr); at != std::string::npos; at = lower(html).find(attr, at + 1)) {
      const std::size_t begin = at + std::strlen(attr);
      const std::string value = html.substr(begin, html.find(attr[std::strlen(attr) - 1], begin) - begin);
      CHECK_MESSAGE((value.rfind('#', 0) == 0 || value.rfind("data:", 0) == 0), value);
      CHECK(value.find("//") == std::string::npos);
      ++attributes;
    }
  }
  CHECK(attributes >= 6);  // the icon and the navigation links were found
  for (const char* bad : {"http://", "https://", "src=//", "url(", "@import", "<link rel=\"stylesheet\"", "<iframe", "fetch(",
                          "xmlhttprequest", "import(", "<img"})
    CHECK_MESSAGE(lower(html).find(bad) == std::string::npos, bad);
  CHECK(html.find("content=\"default-src 'none';") != std::string::npos);  // and the browser is told to load nothing
}

TEST_CASE("an empty report gives a page with empty tables") {
  const scopeprof::report r;
  const std::string html = r.html();
  const sptest::json data = page_data(html);
  CHECK(data.find("report")->find("flat")->items.empty());
  CHECK(data.find("report")->find("tree")->items.empty());
  CHECK(data.find("histograms")->items.empty());
  CHECK(data.find("roots")->find("threads")->items.empty());
  CHECK(integer(data.find("report")->find("counts")->find("recorded")) == 0);
  CHECK(html.find("<dt>recorded</dt><dd>0</dd>") != std::string::npos);
  CHECK(html.find("</html>\n") == html.size() - 8);
}

namespace {

/// This test program again with SCOPEPROF_TEST_CHILD=at_exit (test_outputs.cpp: two scopes, "child outer"
/// and "child inner", and a normal exit) and `report` as SCOPEPROF_REPORT; returns its exit code, stderr in `err`.
int run_at_exit_child(const std::string& report, const sptest::temp_dir& dir, std::string& err) {
  char exe[4096];
  const ssize_t n = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
  REQUIRE(n > 0);
  exe[n] = '\0';
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e)
    if (std::strncmp(*e, "SCOPEPROF", 9) != 0) env.emplace_back(*e);
  env.push_back("SCOPEPROF_TEST_CHILD=at_exit");
  env.push_back("SCOPEPROF_REPORT=" + report);
  std::vector<char*> envp;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  char* argv[] = {exe, nullptr};
  const std::string err_path = dir / "child.err";
  posix_spawn_file_actions_t actions;
  REQUIRE(posix_spawn_file_actions_init(&actions) == 0);
  posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, exe, &actions, nullptr, argv, envp.data());
  posix_spawn_file_actions_destroy(&actions);
  REQUIRE_MESSAGE(rc == 0, "posix_spawn failed: " << std::strerror(rc));
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  err = sptest::read_file_bytes(err_path);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

void check_child_page(const std::string& html) {
  const sptest::json data = page_data(html);
  std::size_t found = 0;
  for (const auto& f : data.find("report")->find("flat")->items)
    found += f.find("name")->text == "child outer" || f.find("name")->text == "child inner";
  CHECK(found == 2);
}

}  // namespace

TEST_CASE("write_html writes the page, or says where and why it could not") {
  const auto r = scopeprof::detail::build_report(steps_snapshot(3, 0));
  const sptest::temp_dir dir;
  std::ofstream(dir / "afile") << "a regular file\n";
  SUBCASE("a writable path holds exactly html()") {
    const auto res = r.write_html(dir / "r.html");
    CHECK(res);
    CHECK(sptest::read_file_bytes(dir / "r.html") == r.html());
  }
  SUBCASE("a path under a regular file, a missing directory, an empty path") {
    struct failing {
      std::string path;
      const char* reason;
    };
    for (const auto& f : {failing{dir / "afile/r.html", std::strerror(ENOTDIR)}, failing{dir / "no/such/r.html", std::strerror(ENOENT)},
                          failing{"", "empty path"}}) {
      scopeprof::write_result res;
      CHECK_NOTHROW(res = r.write_html(f.path));
      CHECK_FALSE(res.ok());
      CHECK_MESSAGE(res.message().find("cannot write HTML report") != std::string::npos, res.message());
      CHECK_MESSAGE(res.message().find(f.reason) != std::string::npos, res.message());
      if (!f.path.empty()) CHECK(res.message().find("'" + f.path + "'") != std::string::npos);
    }
  }
#if SCOPEPROF_WITH_ZLIB
  SUBCASE(".html.gz is the same page, gzipped") {
    REQUIRE(r.write_html(dir / "r.html.gz"));
    const sptest::gunzipped g = sptest::gunzip_file(dir / "r.html.gz");
    CHECK(g.ok);
    CHECK(g.gzip);
    CHECK(g.bytes == r.html());
  }
#endif
}

TEST_CASE("SCOPEPROF_REPORT=*.html writes the HTML report when the program exits" * doctest::test_suite("child_process")) {
  const sptest::temp_dir dir;
  std::string err;
  CHECK(run_at_exit_child(dir / "r.html", dir, err) == 0);
  CHECK_MESSAGE(err.empty(), err);
  check_child_page(sptest::read_file_bytes(dir / "r.html"));
#if SCOPEPROF_WITH_ZLIB
  CHECK(run_at_exit_child(dir / "r.HTML.gz", dir, err) == 0);
  CHECK_MESSAGE(err.empty(), err);
  const sptest::gunzipped g = sptest::gunzip_file(dir / "r.HTML.gz");
  CHECK(g.gzip);
  check_child_page(g.bytes);
#endif
}
