// speedscope's file format (report::speedscope, write_speedscope): the schema's structure, one profile per
// host thread, device stream and CUPTI stream, shared frames named by scope, exact nesting at equal
// nanoseconds, spans that overlap without nesting in a further lane, any name, an empty report, gzip, and
// a failing path as a write_result.
#include "gzip_check.hpp"
#include "output_check.hpp"

#include "internals.hpp"
#include "raw_builders.hpp"

#include <doctest/doctest.h>
#include "temp_files.hpp"  // after <scopeprof.hpp>: LibTorch's logging macros must not replace doctest's

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>
#include "doctest_checks.hpp"  // last: doctest's CHECK, not glog's (unity build)

namespace {

using scopeprof::activity_kind;
using scopeprof::device_status;
using scopeprof::detail::raw_instance;
using scopeprof::detail::raw_snapshot;
using sptest::device_timed;
using sptest::device_work;
using sptest::host_record;

/// Threads with these records (post-order), named "main" (tid 11), then unnamed (tid 12, 13, ...).
scopeprof::report build(raw_snapshot s, std::vector<std::vector<raw_instance>> threads) {
  for (std::size_t t = 0; t < threads.size(); ++t) {
    auto& th = sptest::add_thread(s, std::move(threads[t]), 11 + t);
    if (t == 0) th.desc.name = "main";
  }
  return scopeprof::detail::build_report(std::move(s));
}

sptest::json parse(const std::string& text) {
  sptest::json doc;
  std::string err;
  REQUIRE_MESSAGE(sptest::parse_json(text, doc, err), err);
  return doc;
}

std::vector<std::string> profile_names(const sptest::json& doc) {
  std::vector<std::string> names;
  for (const auto& p : doc.find("profiles")->items) names.push_back(p.find("name")->text);
  return names;
}

/// A profile's events as "O<frame name>@<at> C<frame name>@<at> ...".
std::string events_of(const sptest::json& doc, std::size_t profile) {
  const auto& frames = doc.find("shared")->find("frames")->items;
  std::string out;
  for (const auto& ev : doc.find("profiles")->items.at(profile).find("events")->items) {
    std::int64_t frame = 0;
    REQUIRE(ev.find("frame")->integer(frame));
    if (!out.empty()) out += ' ';
    out += ev.find("type")->text + frames.at(static_cast<std::size_t>(frame)).find("name")->text + "@" + ev.find("at")->text;
  }
  return out;
}

}  // namespace

TEST_CASE("speedscope: the schema's structure, one profile per thread and stream, frames by scope") {
  raw_snapshot s;
  s.sites = {{"step", "train.cu", "run", 12}, {"linear", "train.cu", "run", 20}, {"load", "", "", 0}};
  s.activity_names = {"_Z4gemmPfi", "[CUDA memcpy HtoD]"};
  s.origin_ns = 1'000'000;
  s.sources.cupti_valid = true;
  s.sources.cupti = "synthetic";
  const std::int64_t o = s.origin_ns;
  s.activities = {device_work(activity_kind::kernel, 0, 0, 0, 7, o + 400, o + 900),
                  device_work(activity_kind::memcpy, 0, 1, 1, 7, o + 950, o + 1'000)};
  const raw_instance linear = device_timed(host_record(1, 1, o + 200, o + 300), 0, 0x10, o + 400, o + 900);
  const raw_instance step = device_timed(host_record(0, 0, o + 100, o + 600), 0, 0x10, o + 350, o + 1'000);
  const scopeprof::report r = build(s, {{linear, step}, {host_record(2, 0, o + 50, o + 80)}});
  REQUIRE(r.instances().size() == 3);
  const std::string text = r.speedscope();
  CHECK_MESSAGE(sptest::check_speedscope(r, text).empty(), sptest::check_speedscope(r, text));
  const sptest::json doc = parse(text);

  CHECK(doc.find("$schema")->text == "https://www.speedscope.app/file-format-schema.json");
  CHECK(doc.find("exporter")->text == "scopeprof@" SCOPEPROF_VERSION_STRING);
  CHECK(doc.find("name")->text == "scopeprof");
  CHECK(doc.find("activeProfileIndex")->text == "0");
  CHECK(profile_names(doc) == std::vector<std::string>{"main (tid 11)", "thread 1 (tid 12)", "GPU 0 stream 0x10 (CUDA events)",
                                                        "GPU 0 stream 7 (CUPTI)"});
  // Frames: the scope's name alone, file and line where known; kernels demangled.
  std::set<std::string> frames;
  for (const auto& f : doc.find("shared")->find("frames")->items) {
    const std::string& name = f.find("name")->text;
    frames.insert(name);
    if (name == "step") {
      CHECK(f.find("file")->text == "train.cu");
      CHECK(f.find("line")->text == "12");
    }
    if (name == "load") {
      CHECK(f.find("file") == nullptr);
      CHECK(f.find("line") == nullptr);
    }
  }
  CHECK(frames == std::set<std::string>{"step", "linear", "load", "gemm(float*, int)", "[CUDA memcpy HtoD]"});
  // Integer nanoseconds from the origin; one range shared by all profiles, so their times line up.
  for (const auto& p : doc.find("profiles")->items) {
    CHECK(p.find("type")->text == "evented");
    CHECK(p.find("unit")->text == "nanoseconds");
    CHECK(p.find("startValue")->text == "50");
    CHECK(p.find("endValue")->text == "1000");
  }
  CHECK(events_of(doc, 0) == "Ostep@100 Olinear@200 Clinear@300 Cstep@600");
  CHECK(events_of(doc, 1) == "Oload@50 Cload@80");
  CHECK(events_of(doc, 2) == "Ostep@350 Olinear@400 Clinear@900 Cstep@1000");
  CHECK(events_of(doc, 3) == "Ogemm(float*, int)@400 Cgemm(float*, int)@900 O[CUDA memcpy HtoD]@950 C[CUDA memcpy HtoD]@1000");
}

TEST_CASE("speedscope: a child closes before its parent and a span before its next sibling, at equal times") {
  raw_snapshot s;
  s.sites = {{"outer", "a.cpp", "f", 1}, {"inner", "a.cpp", "f", 2}, {"tail", "a.cpp", "f", 3}};
  s.origin_ns = 0;
  // outer [100, 200] { inner [150, 200]; tail [200, 200] }, outer [200, 300] { inner [200, 300] }, and
  // roots of no length at the same nanosecond.
  const std::int64_t big = 9'876'543'210'123;  // far from zero: the times stay exact integers
  const scopeprof::report r =
      build(s, {{host_record(1, 1, 150, 200), host_record(2, 1, 200, 200), host_record(0, 0, 100, 200),
                 host_record(1, 1, 200, 300), host_record(0, 0, 200, 300), host_record(2, 0, 300, 300),
                 host_record(2, 0, 300, 300), host_record(1, 1, big + 3, big + 40), host_record(0, 0, big, big + 40)}});
  REQUIRE(r.instances().size() == 9);
  const std::string text = r.speedscope();
  CHECK_MESSAGE(sptest::check_speedscope(r, text).empty(), sptest::check_speedscope(r, text));
  const sptest::json doc = parse(text);
  REQUIRE(profile_names(doc) == std::vector<std::string>{"main (tid 11)"});
  CHECK(events_of(doc, 0) ==
        "Oouter@100 Oinner@150 Cinner@200 Otail@200 Ctail@200 Couter@200 Oouter@200 Oinner@200 Cinner@300 Couter@300 "
        "Otail@300 Ctail@300 Otail@300 Ctail@300 Oouter@9876543210123 Oinner@9876543210126 Cinner@9876543210163 "
        "Couter@9876543210163");
}

TEST_CASE("speedscope: any scope name is one frame, escaped, valid UTF-8") {
  const std::string fffd = "\xEF\xBF\xBD";
  const std::vector<std::pair<std::string, std::string>> names = {
      {"q\"uote\\back", "q\"uote\\back"},   {"line\nbreak\ttab", "line\nbreak\ttab"},
      {std::string("ctl\x01\x1f\x7f", 6), "ctl\x01\x1f\x7f"}, {"\xce\xb1\xce\xb2 \xf0\x9f\x94\xa5", "\xce\xb1\xce\xb2 \xf0\x9f\x94\xa5"},
      {"bad \x80\xff", "bad " + fffd + fffd}, {"", ""}, {"{\"json\": [1]}", "{\"json\": [1]}"}};
  raw_snapshot s;
  std::vector<raw_instance> records;
  for (std::size_t i = 0; i < names.size(); ++i) {
    s.sites.push_back({names[i].first, "f\"ile\n.cpp", "f", 1});
    const auto at = 10 * static_cast<std::int64_t>(i);
    records.push_back(host_record(static_cast<std::uint32_t>(i), 0, at, at + 5));
  }
  const scopeprof::report r = build(s, {records});
  const std::string text = r.speedscope();
  CHECK(sptest::valid_utf8(text));
  CHECK_MESSAGE(sptest::check_speedscope(r, text).empty(), sptest::check_speedscope(r, text));
  const sptest::json doc = parse(text);  // strict: no raw control character, every escape valid
  const auto& frames = doc.find("shared")->find("frames")->items;
  REQUIRE(frames.size() == names.size());
  for (std::size_t i = 0; i < names.size(); ++i) {
    CHECK(frames[i].find("name")->text == names[i].second);
    CHECK(frames[i].find("file")->text == "f\"ile\n.cpp");
  }
  SUBCASE("from real scopes too") {
    scopeprof::set_enabled(true);
    scopeprof::reset();
    for (const auto& n : names) {
      PROF_SCOPE_DYN(n.first);
      { PROF_SCOPE_DYN(n.first); }  // nested in itself
    }
    const scopeprof::report real = scopeprof::collect();
    CHECK(real.instances().size() == 2 * names.size());
    CHECK_MESSAGE(sptest::check_speedscope(real, real.speedscope()).empty(), sptest::check_speedscope(real, real.speedscope()));
  }
}

TEST_CASE("speedscope: an empty report, and one with dropped or open scopes, say so") {
  SUBCASE("nothing recorded") {
    const scopeprof::report empty;
    const std::string text = empty.speedscope();
    CHECK(sptest::check_speedscope(empty, text).empty());
    const sptest::json doc = parse(text);
    CHECK(doc.find("shared")->find("frames")->items.empty());
    CHECK(doc.find("profiles")->items.empty());
    CHECK(doc.find("name")->text == "scopeprof");  // speedscope names the group after the first profile otherwise
  }
  SUBCASE("a thread with no finished scope still has its profile") {
    raw_snapshot s;
    s.sites = {{"open", "a.cpp", "f", 1}};
    s.threads.emplace_back();
    s.threads[0].desc.os_id = 5;
    s.threads[0].desc.counts = {4, 0, 3, 1};
    s.counts = {4, 0, 3, 1};
    const scopeprof::report r = scopeprof::detail::build_report(std::move(s));
    const std::string text = r.speedscope();
    CHECK_MESSAGE(sptest::check_speedscope(r, text).empty(), sptest::check_speedscope(r, text));
    const sptest::json doc = parse(text);
    CHECK(profile_names(doc) == std::vector<std::string>{"thread 0 (tid 5)"});
    CHECK(doc.find("profiles")->items[0].find("events")->items.empty());
    CHECK(doc.find("name")->text == "scopeprof (3 scopes dropped, 1 still open)");
    CHECK(doc.find("scopeprof")->find("dropped")->text == "3");
    CHECK(doc.find("scopeprof")->find("in_flight")->text == "1");
  }
}

TEST_CASE("speedscope: device spans by stream, CUPTI work by stream, overlaps in a further lane") {
  raw_snapshot s;
  s.sites = {{"a", "a.cpp", "f", 1}, {"b", "a.cpp", "f", 2}, {"c", "a.cpp", "f", 3}};
  s.activity_names = {"k1", "k2"};
  s.origin_ns = 0;
  // Thread 0: a [0, 1000] with device span [100, 900] on the default stream, holding c's [200, 300];
  // thread 1: b [500, 600] whose device span [800, 1200] on the same stream overlaps a's without nesting.
  const raw_instance c = device_timed(host_record(2, 1, 10, 20), 0, 0, 200, 300);
  const raw_instance a = device_timed(host_record(0, 0, 0, 1'000), 0, 0, 100, 900);
  const raw_instance b = device_timed(host_record(1, 0, 500, 600), 0, 0, 800, 1'200);
  raw_instance captured = host_record(2, 0, 2'000, 2'100);
  captured.device = device_status::captured;
  SUBCASE("CUPTI evidence valid: kernels that overlap go to a second lane") {
    s.sources.cupti_valid = true;
    s.sources.cupti = "synthetic";
    s.activities = {device_work(activity_kind::kernel, 0, 1, 0, 3, 100, 500),
                    device_work(activity_kind::kernel, 1, 0, 1, 3, 400, 800),
                    device_work(activity_kind::memset, 0, 0, 1, 3, 800, 800)};
    const scopeprof::report r = build(s, {{c, a, captured}, {b}});
    const std::string text = r.speedscope();
    CHECK_MESSAGE(sptest::check_speedscope(r, text).empty(), sptest::check_speedscope(r, text));
    const sptest::json doc = parse(text);
    REQUIRE(profile_names(doc) ==
            std::vector<std::string>{"main (tid 11)", "thread 1 (tid 12)", "GPU 0 stream default (CUDA events)",
                                     "GPU 0 stream default (CUDA events) lane 2", "GPU 0 stream 3 (CUPTI)",
                                     "GPU 0 stream 3 (CUPTI) lane 2"});
    CHECK(events_of(doc, 2) == "Oa@100 Oc@200 Cc@300 Ca@900");
    CHECK(events_of(doc, 3) == "Ob@800 Cb@1200");
    CHECK(events_of(doc, 4) == "Ok1@100 Ck1@500 Ok2@800 Ck2@800");  // kernels never nest: the memset follows k1
    CHECK(events_of(doc, 5) == "Ok2@400 Ck2@800");
  }
  SUBCASE("CUPTI evidence not valid: no CUPTI profile, whatever records there are") {
    s.sources.cupti_valid = false;
    s.activities = {device_work(activity_kind::kernel, 0, 1, 0, 3, 100, 500)};
    const scopeprof::report r = build(s, {{c, a, captured}, {b}});
    const std::string text = r.speedscope();
    CHECK_MESSAGE(sptest::check_speedscope(r, text).empty(), sptest::check_speedscope(r, text));
    const sptest::json doc = parse(text);
    CHECK(profile_names(doc) == std::vector<std::string>{"main (tid 11)", "thread 1 (tid 12)", "GPU 0 stream default (CUDA events)",
                                                          "GPU 0 stream default (CUDA events) lane 2"});
    for (const auto& f : doc.find("shared")->find("frames")->items) CHECK(f.find("name")->text.size() == 1);  // no k1, k2
  }
}

TEST_CASE("speedscope: write_speedscope writes what speedscope() returns, across flushes") {
  const sptest::temp_dir dir;
  raw_snapshot s;
  s.sites = {{"root", "a.cpp", "f", 1}, {"child", "a.cpp", "f", 2}};
  std::vector<raw_instance> records;
  for (std::int64_t i = 0; i < 40'000; ++i) {  // about 2.6 MB: several 1 MiB buffers
    records.push_back(host_record(1, 1, 100 * i + 10, 100 * i + 60));
    records.push_back(host_record(0, 0, 100 * i, 100 * i + 90));
  }
  const scopeprof::report r = build(s, {records});
  const std::string text = r.speedscope();
  REQUIRE(text.size() > (std::size_t{2} << 20));
  CHECK(sptest::check_speedscope(r, text).empty());
  const scopeprof::write_result res = r.write_speedscope(dir / "r.speedscope.json");
  REQUIRE_MESSAGE(res, res.message());
  CHECK(sptest::read_file_bytes(dir / "r.speedscope.json") == text);
#if SCOPEPROF_WITH_ZLIB
  SUBCASE("as gzip, for a path ending in .gz") {
    for (const char* gz : {"r.speedscope.json.gz", "R.SPEEDSCOPE.JSON.GZ"}) {
      const scopeprof::write_result zres = r.write_speedscope(dir / gz);
      REQUIRE_MESSAGE(zres, zres.message());
      const sptest::gunzipped g = sptest::gunzip_file(dir / gz);
      CHECK_MESSAGE(g.ok, g.error);
      CHECK(g.gzip);
      CHECK(g.bytes == text);
      CHECK(sptest::read_file_bytes(dir / gz).size() * 4 < text.size());
    }
  }
#endif
}

TEST_CASE("speedscope: a path that cannot be written is a write_result with the path and the reason") {
  const sptest::temp_dir dir;
  const scopeprof::report r = build(raw_snapshot{}, {{}});
  for (const std::string name : {"no/such/dir/r.speedscope.json", "no/such/dir/r.speedscope.json.gz"}) {
    const std::string path = dir / name;
    scopeprof::write_result res;
    CHECK_NOTHROW(res = r.write_speedscope(path));
    CHECK_FALSE(res);
#if !SCOPEPROF_WITH_ZLIB
    if (path.size() > 3 && path.compare(path.size() - 3, 3, ".gz") == 0) continue;  // refused without zlib
#endif
    CHECK_MESSAGE(res.message() == "scopeprof: cannot write speedscope profile to '" + path + "': " + std::strerror(ENOENT),
                  res.message());
  }
  const scopeprof::write_result empty = r.write_speedscope("");
  CHECK_FALSE(empty);
  CHECK(empty.message() == "scopeprof: cannot write speedscope profile: empty path");
}
