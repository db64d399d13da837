// The CUPTI side of the report model, from synthetic snapshots and records (no GPU, no CUPTI library):
// attribution by external id, device busy and kernel counts (self and inclusive, recursion counted once),
// the kernel summary, the writers with and without valid CUPTI evidence, and arbitrary bytes in kernel names.
#include "csv_check.hpp"
#include "json_check.hpp"
#include "output_check.hpp"

#include "internals.hpp"
#include "raw_builders.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>
#include "doctest_checks.hpp"  // last: doctest's CHECK, not glog's (unity build)

namespace {

using scopeprof::activity_kind;
using scopeprof::detail::raw_activity;
using sptest::device_work;
using sptest::host_record;
using sptest::one_thread_snapshot;

// step { launch k1 (10 us), memcpy (5 us); inner { k1 (20 us), k2 (30 us) } } and one kernel outside.
// Records in post-order: inner (index 0), step (index 1).
scopeprof::detail::raw_snapshot step_snapshot(bool valid) {
  auto s = one_thread_snapshot("cupti.cpp", {"step", "inner"},
                               {host_record(1, 1, 2'000, 90'000), host_record(0, 0, 1'000, 100'000)});
  s.sources.cupti_valid = valid;
  s.sources.cupti = valid ? "test records" : "withheld: CUPTI is held by another tool (test)";
  s.activity_names = {"k1", "k2", "[CUDA memcpy HtoD]"};
  s.activities = {
      device_work(activity_kind::kernel, 0, 1, 0, 7, 110'000, 120'000),
      device_work(activity_kind::memcpy, 0, 1, 2, 7, 120'000, 125'000),
      device_work(activity_kind::kernel, 0, 0, 0, 7, 130'000, 150'000),
      device_work(activity_kind::kernel, 0, 0, 1, 7, 150'000, 180'000),
      device_work(activity_kind::kernel, -1, -1, 1, 7, 200'000, 201'000),
  };
  return s;
}

}  // namespace

TEST_CASE("CUPTI records are attributed to the innermost launching scope by external id") {
  scopeprof::detail::activity_log log;
  const auto k = log.intern("kernel<float>");
  CHECK(log.intern("kernel<float>") == k);
  const auto m = log.intern("[CUDA memset]");
  CHECK(m != k);
  // correlation 10 -> scope (thread 0, record 3); 11 -> a scope that was dropped; 12 -> the probe; 13: no external id
  log.correlate(10, 1001);
  log.correlate(11, 1002);
  log.correlate(12, 9999);
  log.add({activity_kind::kernel, 10, 0, 7, 0, 100, 200, k});
  log.add({activity_kind::kernel, 10, 0, 7, 0, 200, 260, k});  // a graph launch: several kernels, one correlation
  log.add({activity_kind::memset, 11, 0, 7, 0, 300, 310, m});
  log.add({activity_kind::memset, 12, 0, 9, 0, 400, 401, m});
  log.add({activity_kind::kernel, 13, 0, 7, 0, 500, 600, k});
  std::vector<raw_activity> out;
  const auto at = log.attribute(
      [](std::uint64_t external, std::int64_t& thread, std::int64_t& record) {
        if (external == 9999) return scopeprof::detail::attribute_result::ignore;
        if (external != 1001) return scopeprof::detail::attribute_result::outside;
        thread = 0;
        record = 3;
        return scopeprof::detail::attribute_result::attributed;
      },
      out);
  REQUIRE(out.size() == 4);
  CHECK(at.kernels == 3);
  CHECK(at.copies == 1);
  CHECK(at.outside == 2);
  CHECK(out[0].thread == 0);
  CHECK(out[0].record == 3);
  CHECK(out[1].record == 3);
  CHECK(out[2].thread == -1);
  CHECK(out[3].record == -1);

  SUBCASE("the probe comes back only with its own memset and correlation") {
    const auto p = log.check_probe(9999, 0);
    CHECK(p.correlation_seen);
    CHECK(p.memset_seen);
    CHECK_FALSE(log.check_probe(9999, 4).memset_seen);  // nothing arrived after record 4
    CHECK_FALSE(log.check_probe(4242, 0).correlation_seen);
  }
  SUBCASE("reset keeps only the records of scopes still open") {
    log.discard_if([](std::uint64_t external) { return external != 1001; });  // 1001 is still open
    CHECK(log.entries().size() == 2);
    log.discard_if([](std::uint64_t) { return true; });
    CHECK(log.entries().empty());
  }
}

TEST_CASE("device busy and kernel counts: self and inclusive, in every view") {
  const scopeprof::report r = scopeprof::detail::build_report(step_snapshot(true));
  REQUIRE(r.instances().size() == 2);
  const auto& step = r.instances()[0];
  const auto& inner = r.instances()[1];
  CHECK(inner.kernels == 2);
  CHECK(inner.kernels_self == 2);
  CHECK(inner.device_busy_ns == 50'000);
  CHECK(step.kernels_self == 1);
  CHECK(step.kernels == 3);
  CHECK(step.copies == 1);
  CHECK(step.device_busy_self_ns == 15'000);
  CHECK(step.device_busy_ns == 65'000);
  REQUIRE(r.activities().size() == 5);
  CHECK(r.activities()[4].instance == -1);

  const auto* f = r.find("step");
  REQUIRE(f != nullptr);
  CHECK(f->kernels == 3);
  CHECK(f->device_busy_ns == 65'000);
  CHECK(f->device_busy_self_ns == 15'000);
  REQUIRE(r.tree().size() == 2);
  CHECK(r.tree()[1].kernels == 2);
  CHECK(r.tree()[1].device_busy_ns == 50'000);

  // Summary by (scope, kernel): inner/k2 30 us, inner/k1 20 us, step/k1 10 us, (no scope)/k2 1 us.
  const auto& ks = r.kernel_summary();
  REQUIRE(ks.size() == 4);
  CHECK(ks[0].scope == "inner");
  CHECK(ks[0].kernel == "k2");
  CHECK(ks[0].time.sum == 30'000);
  CHECK(ks[3].scope == "(no scope)");
  double pct = 0;
  for (const auto& k : ks) pct += k.time_pct;
  CHECK(pct == doctest::Approx(100.0));
  CHECK(ks[0].time_pct == doctest::Approx(100.0 * 30.0 / 61.0));

  CHECK(sptest::check_all_outputs(r) == "");
  const std::string text = r.to_string();
  CHECK(text.find("Dev busy") != std::string::npos);
  CHECK(text.find("Kernels by scope (CUPTI") != std::string::npos);
  CHECK(r.csv().find("kernel,0,,,k2,inner,1,") != std::string::npos);
  CHECK(r.json().find("\"cupti\":{\"busy\":65000,\"busy_self\":15000,\"kernels\":3,\"copies\":1}") != std::string::npos);
  CHECK(r.chrome_trace().find("\"cat\":\"kernel\"") != std::string::npos);
}

TEST_CASE("a kernel summary groups by scope name and kernel name with the nsys columns' statistics") {
  auto s = one_thread_snapshot("cupti.cpp", {"loop"},
                               {host_record(0, 0, 0, 10), host_record(0, 0, 20, 30), host_record(0, 0, 40, 50)});
  s.sources.cupti_valid = true;
  s.activity_names = {"gemm"};
  s.activities = {
      device_work(activity_kind::kernel, 0, 0, 0, 7, 100, 110),
      device_work(activity_kind::kernel, 0, 1, 0, 7, 200, 230),
      device_work(activity_kind::kernel, 0, 2, 0, 7, 300, 320),
  };
  const auto r = scopeprof::detail::build_report(std::move(s));
  REQUIRE(r.kernel_summary().size() == 1);
  const auto& k = r.kernel_summary()[0];
  CHECK(k.time.count == 3);
  CHECK(k.time.sum == 60);
  CHECK(k.time.min == 10);
  CHECK(k.time.max == 30);
  CHECK(k.time.median == 20.0);
  CHECK(k.time.mean == 20.0);
  CHECK(k.time_pct == 100.0);
  CHECK(r.find("loop")->kernels == 3);
}

TEST_CASE("kernel names: tables show them demangled and cut as Nsight does; JSON and trace keep the symbol") {
  // Symbols as nvcc emits them (this one: void scopeprof_gpu::spin_kernel(unsigned long long, unsigned long long*)).
  const std::string spin = "_ZN13scopeprof_gpu11spin_kernelEyPy";
  const std::string arg(150, 'A');  // k<A...A>(float*): a 150-character template argument
  const std::string long_symbol = "_Z1kI" + std::to_string(arg.size()) + arg + "EvPf";
  auto s = one_thread_snapshot("cupti.cpp", {"loop"}, {host_record(0, 0, 0, 10), host_record(0, 0, 20, 30)});
  s.sources.cupti_valid = true;
  s.activity_names = {spin, long_symbol, "vectorAdd"};
  s.activities = {
      device_work(activity_kind::kernel, 0, 0, 0, 7, 100, 110),
      device_work(activity_kind::kernel, 0, 1, 1, 7, 200, 230),
      device_work(activity_kind::kernel, 0, 1, 2, 7, 300, 320),
  };
  const auto r = scopeprof::detail::build_report(std::move(s));
  REQUIRE(r.kernel_summary().size() == 3);
  const std::string spin_demangled = "scopeprof_gpu::spin_kernel(unsigned long long, unsigned long long*)";
  bool seen_spin = false;
  for (const auto& k : r.kernel_summary()) {
    if (k.mangled == spin) {
      seen_spin = true;
      CHECK(k.kernel == spin_demangled);
    }
    if (k.mangled == "vectorAdd") CHECK(k.kernel == "vectorAdd");
  }
  CHECK(seen_spin);
  const std::string text = r.to_string();
  CHECK(text.find(spin_demangled) != std::string::npos);
  CHECK(text.find(spin) == std::string::npos);
  // The 150-character argument makes the demangled name longer than 100: 99 characters and an ellipsis.
  const std::string long_demangled = "void k<" + arg + ">(float*)";
  CHECK(text.find(long_demangled.substr(0, 99) + "\xE2\x80\xA6") != std::string::npos);
  CHECK(text.find(long_demangled) == std::string::npos);
  sptest::json j;
  std::string error;
  REQUIRE(sptest::parse_json(r.json(), j, error));
  const sptest::json* summary = j.find("kernel_summary");
  REQUIRE(summary != nullptr);
  bool json_long = false;
  for (const auto& k : summary->items)
    if (k.find("mangled")->text == long_symbol) json_long = k.find("name")->text == long_demangled;
  CHECK(json_long);  // whole, never cut
  const std::string trace = r.chrome_trace();
  CHECK(trace.find("\"name\":\"" + spin_demangled + "\"") != std::string::npos);
  CHECK(trace.find("\"mangled\":\"" + spin + "\"") != std::string::npos);
  CHECK(trace.find("\"mangled\":\"vectorAdd\"") == std::string::npos);  // nothing to add for a C name
  CHECK(sptest::check_all_outputs(r) == "");
}

TEST_CASE("recursion: a name nested in itself counts its busy time once in the flat table") {
  auto s = one_thread_snapshot("cupti.cpp", {"rec"}, {host_record(0, 1, 10, 20), host_record(0, 0, 0, 100)});
  s.sources.cupti_valid = true;
  s.activity_names = {"k"};
  s.activities = {
      device_work(activity_kind::kernel, 0, 0, 0, 7, 200, 300),
      device_work(activity_kind::kernel, 0, 1, 0, 7, 300, 350),
  };
  const auto r = scopeprof::detail::build_report(std::move(s));
  const auto* f = r.find("rec");
  REQUIRE(f != nullptr);
  CHECK(f->kernels == 2);
  CHECK(f->device_busy_ns == 150);
  CHECK(f->device_busy_self_ns == 150);
}

TEST_CASE("without valid CUPTI evidence the outputs keep their shape and say why") {
  const scopeprof::report r = scopeprof::detail::build_report(step_snapshot(false));
  CHECK(r.activities().empty());
  CHECK(r.kernel_summary().empty());
  CHECK(r.instances()[0].kernels == 0);
  CHECK(sptest::check_all_outputs(r) == "");
  const std::string text = r.to_string();
  CHECK(text.find("Dev busy") == std::string::npos);
  CHECK(text.find("CUPTI:       withheld: CUPTI is held by another tool (test)") != std::string::npos);
  CHECK(std::string(scopeprof::cupti_status_text(r.sources())) == "withheld");
  CHECK(r.csv().find(",,,,,withheld,,") != std::string::npos);  // CUPTI cells empty, cupti_status says why
  CHECK(r.json().find("\"cupti_valid\":false") != std::string::npos);
  CHECK(r.json().find("\"cupti\":null") != std::string::npos);
  CHECK(r.chrome_trace().find("\"cat\":\"kernel\"") == std::string::npos);
  scopeprof::evidence e;
  CHECK(std::string(scopeprof::cupti_status_text(e)) == "n/a");
  e.cupti = "invalid: records lost";
  CHECK(std::string(scopeprof::cupti_status_text(e)) == "invalid");
}

TEST_CASE("kernel names with any bytes give valid outputs") {
  auto s = step_snapshot(true);
  s.activity_names = {std::string("void k<\"a,b\">\n\x01\xff", 16), std::string("tab\there\r"), "\xe2\x82"};
  const auto r = scopeprof::detail::build_report(std::move(s));
  CHECK(sptest::check_all_outputs(r) == "");
  CHECK(r.to_string().find("\\n\\x01") != std::string::npos);
}

TEST_CASE("collect() names the CUPTI evidence even when the collector is off") {
  const auto r = scopeprof::collect();
  CHECK_FALSE(r.sources().cupti_valid);
  CHECK_FALSE(r.sources().cupti.empty());
#if SCOPEPROF_WITH_CUPTI
  if (!scopeprof::cupti_enabled()) CHECK(r.sources().cupti.rfind("off (", 0) == 0);
#else
  CHECK(r.sources().cupti.rfind("not collected", 0) == 0);
#endif
}
