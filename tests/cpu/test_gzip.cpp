// gzip output (SCOPEPROF_WITH_ZLIB builds): a path ending in .gz holds a gzip stream that inflates to
// exactly the bytes of the uncompressed writer, for the Chrome trace, JSON and CSV, also past several
// 1 MiB chunks; failures of the disk come back as a write_result naming the path and the reason.
#include "gzip_check.hpp"
#include "output_check.hpp"

#include "internals.hpp"

#include <doctest/doctest.h>
#include "temp_files.hpp"  // after <scopeprof.hpp>: LibTorch's logging macros must not replace doctest's

#if SCOPEPROF_WITH_ZLIB
#if !SCOPEPROF_DETAIL_DEFINE_COLD  // header-only builds have it through the umbrella
#include <scopeprof/detail/gzip_sink.hpp>
#endif

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>
#include "doctest_checks.hpp"  // last: doctest's CHECK, not glog's (unity build)

namespace {

// `threads` threads of `per_thread` root scopes with a child each; every other one device-timed on one of
// two streams, odd names, and CUPTI kernels for some of them.
scopeprof::report synthetic_report(std::uint32_t threads, std::uint32_t per_thread) {
  scopeprof::detail::raw_snapshot s;
  for (const char* n : {"step", "q\"uote\\d\n", "\x80\xFF bytes", "tab\tname", ""}) s.sites.push_back({n, "f.cpp", "f", 1});
  s.origin_ns = 1'000'000;
  s.sources.cupti_valid = true;
  s.sources.cupti = "synthetic";
  s.activity_names = {"_Z6kernelPfi", "plain_kernel"};
  for (std::uint32_t t = 0; t < threads; ++t) {
    scopeprof::detail::raw_thread th;
    th.desc.index = t;
    th.desc.os_id = 4000 + t;
    for (std::uint32_t i = 0; i < per_thread; ++i) {
      const std::int64_t b = s.origin_ns + 1000 * static_cast<std::int64_t>(i) + t;
      scopeprof::detail::raw_instance child;
      child.site = 1 + i % 4;
      child.depth = 1;
      child.host_begin_ns = b + 100;
      child.host_end_ns = b + 600;
      if (i % 2 == 0) {
        child.device = scopeprof::device_status::ok;
        child.device_id = 0;
        child.stream = 0x1000 * (1 + i % 4 / 2);
        child.device_begin_ns = b + 150;
        child.device_end_ns = b + 650;
      }
      scopeprof::detail::raw_instance root = child;
      root.site = 0;
      root.depth = 0;
      root.host_begin_ns = b;
      root.host_end_ns = b + 900;
      th.records.push_back(child);
      th.records.push_back(root);
      if (i % 8 == 0) {
        scopeprof::detail::raw_activity a;
        a.thread = t;
        a.record = static_cast<std::int64_t>(th.records.size()) - 2;
        a.name = i % 16 == 0 ? 0 : 1;
        a.device = 0;
        a.stream = 7;
        a.begin_ns = b + 200;
        a.end_ns = b + 300;
        s.activities.push_back(a);
      }
    }
    th.desc.counts = {th.records.size(), th.records.size(), 0, 0};
    s.counts.entered += th.records.size();
    s.counts.recorded += th.records.size();
    s.threads.push_back(std::move(th));
  }
  return scopeprof::detail::build_report(std::move(s));
}

struct gz_writer {
  const char* what;
  const char* ext;
  scopeprof::write_result (*write)(const scopeprof::report&, const std::string&);
  std::string (*text)(const scopeprof::report&);
};

const gz_writer gz_writers[] = {
    {"Chrome trace", ".trace.json", [](const scopeprof::report& r, const std::string& p) { return r.write_chrome_trace(p); },
     [](const scopeprof::report& r) { return r.chrome_trace(); }},
    {"JSON report", ".json", [](const scopeprof::report& r, const std::string& p) { return r.write_json(p); },
     [](const scopeprof::report& r) { return r.json(); }},
    {"CSV report", ".csv", [](const scopeprof::report& r, const std::string& p) { return r.write_csv(p); },
     [](const scopeprof::report& r) { return r.csv(); }},
};

}  // namespace

TEST_CASE("gzip: a .gz path holds a gzip stream of exactly the uncompressed writer's bytes") {
  const sptest::temp_dir dir;
  for (const std::uint32_t per_thread : {3u, 12000u}) {  // one chunk; several 1 MiB chunks
    CAPTURE(per_thread);
    const scopeprof::report r = synthetic_report(3, per_thread);
    REQUIRE(r.instances().size() == 6u * per_thread);
    for (const auto& w : gz_writers) {
      const std::string what = w.what;
      CAPTURE(what);
      const std::string plain = dir / (std::string("r") + w.ext);
      for (const char* gz : {".gz", ".GZ"}) {
        const std::string path = plain + gz;
        const scopeprof::write_result res = w.write(r, path);
        REQUIRE_MESSAGE(res, res.message());
        const std::string raw = sptest::read_file_bytes(path);
        REQUIRE(raw.size() > 18);
        CHECK(static_cast<unsigned char>(raw[0]) == 0x1f);  // the gzip magic
        CHECK(static_cast<unsigned char>(raw[1]) == 0x8b);
        const sptest::gunzipped g = sptest::gunzip_file(path);
        CHECK_MESSAGE(g.ok, g.error);
        CHECK(g.gzip);
        const std::string expected = w.text(r);
        CHECK(g.bytes.size() == expected.size());
        CHECK(g.bytes == expected);
        if (expected.size() > (std::size_t{1} << 20)) CHECK(raw.size() * 4 < expected.size());  // it does compress
      }
      REQUIRE(w.write(r, plain));
      CHECK(sptest::read_file_bytes(plain) == w.text(r));  // the same path without .gz stays plain text
    }
  }
}

TEST_CASE("gzip: failures of the path or the disk are a write_result with the path and the reason") {
  const sptest::temp_dir dir;
  const scopeprof::report r = synthetic_report(2, 50);
  const auto expect_failure = [&](const std::string& base, int err) {
    for (const auto& w : gz_writers) {
      const std::string what = w.what;
      CAPTURE(what);
      const std::string path = base + w.ext + ".gz";
      scopeprof::write_result res;
      CHECK_NOTHROW(res = w.write(r, path));
      CHECK_FALSE(res);
      CHECK_MESSAGE(res.message().find(std::string(w.what) + " to '" + path + "'") != std::string::npos, res.message());
      CHECK_MESSAGE(res.message().find(std::strerror(err)) != std::string::npos, res.message());
    }
  };
  SUBCASE("a missing directory") { expect_failure(dir / "no/such/dir/r", ENOENT); }
  SUBCASE("a path under a regular file") {
    std::ofstream(dir / "afile") << "x";
    expect_failure(dir / "afile/r", ENOTDIR);
  }
  SUBCASE("a full disk (a .gz link to /dev/full)") {
    if (::access("/dev/full", W_OK) != 0) {
      MESSAGE("no writable /dev/full here: skipped");
      return;
    }
    for (const auto& w : gz_writers) {
      const std::string link = dir / (std::string("full") + w.ext + ".gz");
      std::filesystem::create_symlink("/dev/full", link);
    }
    expect_failure(dir / "full", ENOSPC);
  }
}

TEST_CASE("gzip: gzip_path recognises .gz in any case and nothing else") {
  using scopeprof::detail::gzip_path;
  CHECK(gzip_path("a.trace.json.gz"));
  CHECK(gzip_path("A.CSV.GZ"));
  CHECK(gzip_path(".gz"));
  CHECK_FALSE(gzip_path("gz"));
  CHECK_FALSE(gzip_path("a.json"));
  CHECK_FALSE(gzip_path("a.tgz"));
  CHECK_FALSE(gzip_path("a.gz.json"));
}
#endif
