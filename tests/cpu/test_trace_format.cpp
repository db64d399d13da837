// The Chrome trace in the PyTorch profiler's (Kineto's) conventions: the time encoding that keeps nesting
// exact in doubles, the rank from the environment, launch calls from CUPTI's runtime/driver records
// (synthetic, no GPU) placed so tracks nest, flows bound to exactly their slices, and the checker itself
// refusing each kind of broken trace.
#include "output_check.hpp"
#include "trace_check.hpp"

#include "internals.hpp"
#include "raw_builders.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>
#include "doctest_checks.hpp"  // last: doctest's CHECK, not glog's (unity build)

namespace {

using scopeprof::activity_kind;
using scopeprof::detail::raw_activity;
using scopeprof::detail::raw_instance;
using scopeprof::detail::raw_snapshot;
using sptest::device_work;
using sptest::host_record;
using sptest::one_thread_snapshot;
using sptest::with_launch;

// step [1000, 100000) { a [2000, 30000), b [30000, 60000) } on thread 4242, then kernels launched:
// k1 by step at 1500 (fits), k2 by step at 29990..30010 (over the a/b boundary: moved to b's end),
// k3 by b, a graph launch of two kernels by a, a copy by a CUPTI thread the report has no scope of, and a
// kernel without a launch record (its flow leaves b itself).
raw_snapshot launch_snapshot() {
  auto s = one_thread_snapshot("trace.cpp", {"step", "a", "b"},
                               {host_record(1, 1, 2'000, 30'000), host_record(2, 1, 30'000, 60'000),
                                host_record(0, 0, 1'000, 100'000)},
                               4242);
  s.sources.cupti_valid = true;
  s.sources.cupti = "synthetic records";
  s.activity_names = {"k1", "k2", "[CUDA memcpy HtoD]", "cudaLaunchKernel", "cudaGraphLaunch", "cudaMemcpyAsync"};
  s.activities = {
      with_launch(device_work(activity_kind::kernel, 0, 2, 0, 7, 120'000, 130'000, 11), 3, 4242, 1'500, 1'900),
      with_launch(device_work(activity_kind::kernel, 0, 2, 1, 7, 130'000, 140'000, 12), 3, 4242, 29'990, 30'010),
      with_launch(device_work(activity_kind::kernel, 0, 1, 1, 7, 140'000, 150'000, 13), 3, 4242, 40'000, 40'400),
      with_launch(device_work(activity_kind::kernel, 0, 0, 0, 7, 150'000, 160'000, 14), 4, 4242, 5'000, 5'700),
      with_launch(device_work(activity_kind::kernel, 0, 0, 1, 7, 160'000, 170'000, 14), 4, 4242, 5'000, 5'700),
      with_launch(device_work(activity_kind::memcpy, -1, -1, 2, 7, 170'000, 175'000, 15), 5, 777, 3'000, 3'300),
      device_work(activity_kind::kernel, 0, 1, 0, 7, 180'000, 181'000, 16),
  };
  return s;
}

const sptest::json* slice_named(const sptest::json& doc, const std::string& cat, std::size_t nth = 0) {
  for (const auto& e : doc.find("traceEvents")->items)
    if (e.find("cat") && e.find("cat")->text == cat && nth-- == 0) return &e;
  return nullptr;
}

std::int64_t ns_of(const sptest::json* v) { return sptest::trace_ns(v->number()); }

std::string with_env(const char* name, const char* value) {
  if (value) ::setenv(name, value, 1);
  else ::unsetenv(name);
  return name;
}

}  // namespace

TEST_CASE("trace times are multiples of 1/1024 us: exact doubles that give every nanosecond back") {
  using scopeprof::detail::trace_units;
  std::vector<std::int64_t> starts = {0, 1, 999, 123'456'789, 9'876'543'210'123, 1'733'000'000'123'456'789 / 512};
  for (std::int64_t base : starts)
    for (std::int64_t ns = base - 300; ns < base + 3000; ++ns) {
      char buf[scopeprof::detail::max_trace_time_chars];
      char* end = scopeprof::detail::write_trace_time(buf, ns);
      const double v = std::strtod(std::string(buf, end).c_str(), nullptr);
      REQUIRE(v * 1024.0 == static_cast<double>(trace_units(ns)));       // the text is exact
      REQUIRE(trace_units(ns + 1) > trace_units(ns));                     // strictly increasing
      REQUIRE(scopeprof::detail::trace_units_to_ns(trace_units(ns)) == ns);  // invertible
      REQUIRE(sptest::trace_ns(v) == ns);
      if (ns >= 0 && ns < (std::int64_t{1} << 53) / 128)  // v * 1000 is exact below 19.5 hours from the origin
        REQUIRE(static_cast<std::int64_t>(v * 1000.0) == ns);  // as Perfetto's importer reads it
    }
  char buf[scopeprof::detail::max_trace_time_chars];
  CHECK(std::string(buf, scopeprof::detail::write_trace_units(buf, 1)) == "0.0009765625");
  CHECK(std::string(buf, scopeprof::detail::write_trace_units(buf, 1024 * 12 + 512)) == "12.5");
  CHECK(std::string(buf, scopeprof::detail::write_trace_units(buf, -2048)) == "-2");
}

TEST_CASE("nesting survives doubles: a child ending in its parent's nanosecond never ends after it") {
  // Where three-decimal microseconds fail: ts + dur of the child rounds above the parent's.
  const double parent_ts = 9876543210.123, parent_dur = 0.04, child_ts = 9876543210.126, child_dur = 0.037;
  const bool decimal_breaks = child_ts + child_dur > parent_ts + parent_dur;
  auto s = one_thread_snapshot("trace.cpp", {"iteration", "compute"}, {}, 4242);
  std::int64_t t = 9'876'543'210'123;
  for (int i = 0; i < 3000; ++i) {
    const std::int64_t e = t + 37 + (i % 11);
    s.threads[0].records.push_back(host_record(1, 1, t + 3, e));
    s.threads[0].records.push_back(host_record(0, 0, t, e));
    t = e + (i % 3);  // siblings touching (i % 3 == 0) and apart
  }
  s.threads[0].desc.counts.recorded = s.threads[0].desc.counts.entered = s.threads[0].records.size();
  s.counts = s.threads[0].desc.counts;
  const auto r = scopeprof::detail::build_report(std::move(s));
  CHECK(sptest::check_chrome_trace(r, r.chrome_trace()) == "");
  INFO("three decimals would break here: " << decimal_breaks);
}

TEST_CASE("rank and world size come from the launcher's variables, in a documented order") {
  using scopeprof::detail::rank_from_env;
  const char* vars[] = {"RANK", "WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "PMI_RANK", "PMI_SIZE",
                        "SLURM_PROCID", "SLURM_NTASKS"};
  std::vector<std::pair<std::string, std::string>> saved;
  for (const char* v : vars) {
    if (const char* x = std::getenv(v)) saved.emplace_back(v, x);
    ::unsetenv(v);
  }
  CHECK(rank_from_env().rank == 0);
  CHECK(rank_from_env().world_size == 1);
  CHECK(rank_from_env().source.empty());
  with_env("SLURM_PROCID", "5");
  with_env("SLURM_NTASKS", "8");
  CHECK(rank_from_env().rank == 5);
  with_env("PMI_RANK", "3");
  CHECK(rank_from_env().rank == 3);  // PMI before Slurm
  CHECK(rank_from_env().world_size == 4);  // no PMI_SIZE: rank + 1
  with_env("OMPI_COMM_WORLD_RANK", "2");
  with_env("OMPI_COMM_WORLD_SIZE", "16");
  CHECK(rank_from_env().world_size == 16);
  with_env("RANK", "x7");  // malformed: skipped
  CHECK(rank_from_env().rank == 2);
  with_env("RANK", "7");
  with_env("WORLD_SIZE", "64");
  CHECK(rank_from_env().rank == 7);
  CHECK(rank_from_env().source == "RANK");
  const auto r = scopeprof::detail::build_report(launch_snapshot());
  const std::string trace = r.chrome_trace();
  CHECK(trace.find("\"distributedInfo\": {\"rank\": 7, \"world_size\": 64}") != std::string::npos);
  CHECK(sptest::hta_rank(trace) == 7);
  CHECK(sptest::check_chrome_trace(r, trace) == "");
  for (const char* v : vars) ::unsetenv(v);
  for (const auto& [k, v] : saved) ::setenv(k.c_str(), v.c_str(), 1);
}

TEST_CASE("CUPTI launch records: the log joins them to the work by correlation and keeps only launch calls") {
  using scopeprof::detail::launch_call_name;
  CHECK(launch_call_name("cudaLaunchKernel_v7000") == "cudaLaunchKernel");
  CHECK(launch_call_name("cudaLaunchKernel_ptsz_v7000") == "cudaLaunchKernel_ptsz");
  CHECK(launch_call_name("cuLaunchKernel") == "cuLaunchKernel");
  CHECK(launch_call_name("cudaGraphLaunch_v10000") == "cudaGraphLaunch");
  CHECK(launch_call_name("cudaMemcpyAsync_v3020") == "cudaMemcpyAsync");
  CHECK(launch_call_name("cudaEventRecord_v3020").empty());
  CHECK(launch_call_name("cudaStreamSynchronize_v3020").empty());

  scopeprof::detail::activity_log log;
  const auto k = log.intern("k");
  const auto call = log.intern("cudaLaunchKernel");
  log.correlate(10, 1001);
  log.correlate(11, 1002);
  log.add({activity_kind::kernel, 10, 0, 7, 0, 100, 200, k});
  log.add({activity_kind::kernel, 11, 0, 7, 0, 300, 400, k});
  log.add_launch(10, {call, false, 4242, 50, 60});
  log.add_launch(12, {call, true, 4242, 70, 80});  // no work with this correlation
  std::vector<raw_activity> out;
  log.attribute(
      [](std::uint64_t, std::int64_t& thread, std::int64_t& record) {
        thread = 0;
        record = 0;
        return scopeprof::detail::attribute_result::attributed;
      },
      out);
  REQUIRE(out.size() == 2);
  CHECK(out[0].correlation == 10);
  CHECK(out[0].launch_name == call);
  CHECK(out[0].launch_thread == 4242);
  CHECK(out[0].launch_begin_ns == 50);
  CHECK(out[0].launch_end_ns == 60);
  CHECK(out[1].launch_name == scopeprof::device_activity::no_launch);
  log.discard_if([](std::uint64_t external) { return external != 1001; });  // 1001 still open
  CHECK(log.launch_count() == 1);
  log.discard_if([](std::uint64_t) { return true; });
  CHECK(log.launch_count() == 0);
}

TEST_CASE("launch calls become cuda_runtime slices inside their scope, joined to their work by flows") {
  const auto r = scopeprof::detail::build_report(launch_snapshot());
  const std::string trace = r.chrome_trace();
  REQUIRE(sptest::check_chrome_trace(r, trace) == "");
  sptest::json doc;
  std::string err;
  REQUIRE(sptest::parse_json(trace, doc, err));
  const std::int64_t origin = r.origin_ns();
  std::vector<const sptest::json*> calls;
  for (std::size_t i = 0; const auto* c = slice_named(doc, "cuda_runtime", i); ++i) calls.push_back(c);
  REQUIRE(calls.size() == 5);  // the graph launch's two kernels share one call
  std::int64_t begin[5], end[5];
  for (std::size_t i = 0; i < 5; ++i) {
    begin[i] = ns_of(calls[i]->find("ts")) + origin;
    end[i] = sptest::trace_ns(calls[i]->find("ts")->number() + calls[i]->find("dur")->number()) + origin;
  }
  SUBCASE("a call that fits stays where CUPTI put it") {
    CHECK(begin[0] == 1'500);
    CHECK(end[0] == 1'900);
    CHECK(calls[0]->find("args")->find("correlation")->text == "11");
    CHECK(calls[0]->find("args")->find("External id")->text == "1");  // step is the first scope slice
  }
  SUBCASE("a call over a child's boundary moves to the scope's next gap") {
    // k2 was launched by step at 29990..30010, across a's end and b's begin (both 30000): after b.
    CHECK(begin[1] == 60'000);
    CHECK(end[1] == 60'020);
  }
  SUBCASE("a call on a thread without scopes gets its own named track") {
    CHECK(calls[4]->find("name")->text == "cudaMemcpyAsync");
    CHECK(calls[4]->find("tid")->text == "777");
    CHECK(trace.find("\"CUDA API thread 777\"") != std::string::npos);
  }
  SUBCASE("work carries what HTA joins it by, and flows bind by id") {
    const sptest::json* k = slice_named(doc, "kernel");
    REQUIRE(k != nullptr);
    CHECK(k->find("args")->find("stream")->text == "7");
    CHECK(k->find("args")->find("device")->text == "0");
    CHECK(k->find("args")->find("correlation")->text == "11");
    CHECK(k->find("bind_id")->text == calls[0]->find("bind_id")->text);
    const sptest::json* copy = slice_named(doc, "gpu_memcpy");
    REQUIRE(copy != nullptr);
    CHECK(copy->find("name")->text == "Memcpy HtoD");
    CHECK(copy->find("args")->find("External id") == nullptr);  // launched outside any scope
    const sptest::json* last = slice_named(doc, "kernel", 5);  // no launch record: the flow leaves scope b
    REQUIRE(last != nullptr);
    const sptest::json* b = slice_named(doc, "user_annotation", 2);
    CHECK(last->find("bind_id")->text == b->find("bind_id")->text);
    CHECK(b->find("flow_out") != nullptr);
  }
}

TEST_CASE("device spans are gpu_user_annotation slices without a stream arg, one track per stream and thread") {
  auto s = one_thread_snapshot("trace.cpp", {"outer", "inner"}, {}, 4242, 1'000'000);
  raw_instance inner = host_record(1, 1, 1'000, 2'000), outer = host_record(0, 0, 1'000, 5'000);
  for (raw_instance* x : {&inner, &outer}) {
    x->device = scopeprof::device_status::ok;
    x->device_id = 0;
    x->stream = 0xabc;
  }
  inner.device_begin_ns = outer.device_begin_ns = 3'000;  // start together: each flow still binds its own
  inner.device_end_ns = 3'500;
  outer.device_end_ns = 6'000;
  s.threads[0].records = {inner, outer};
  s.threads[0].desc.counts.recorded = s.threads[0].desc.counts.entered = 2;
  s.counts = s.threads[0].desc.counts;
  const auto r = scopeprof::detail::build_report(std::move(s));
  const std::string trace = r.chrome_trace();
  REQUIRE(sptest::check_chrome_trace(r, trace) == "");
  sptest::json doc;
  std::string err;
  REQUIRE(sptest::parse_json(trace, doc, err));
  const auto* span0 = slice_named(doc, "gpu_user_annotation", 0);
  const auto* span1 = slice_named(doc, "gpu_user_annotation", 1);
  REQUIRE(span1 != nullptr);
  CHECK(span0->find("args") == nullptr);
  CHECK(span0->find("ts")->text == span1->find("ts")->text);
  CHECK(span0->find("bind_id")->text != span1->find("bind_id")->text);
  CHECK(slice_named(doc, "user_annotation", 0)->find("bind_id")->text == span0->find("bind_id")->text);
  CHECK(trace.find("\"stream 0xabc (CUDA events, thread 0)\"") != std::string::npos);
}

TEST_CASE("the trace checker refuses each kind of broken trace") {
  const auto r = scopeprof::detail::build_report(launch_snapshot());
  const std::string good = r.chrome_trace();
  REQUIRE(sptest::check_trace_format(good) == "");
  const auto broken = [&](const std::string& from, const std::string& to) {
    std::string t = good;
    const std::size_t at = t.find(from);
    REQUIRE_MESSAGE(at != std::string::npos, from);
    t.replace(at, from.size(), to);
    return sptest::check_trace_format(t);
  };
  CHECK(broken("{\"rank\": 0,", "{\"rank\":0,") != "");  // HTA's regex needs the space
  CHECK(broken("\"distributedInfo\": {\"rank\": 0, \"world_size\": 1},", "") != "");
  CHECK(broken("\"cat\":\"user_annotation\",\"name\":\"a\"", "\"cat\":\"user_annotation\",\"args\":{\"x\":1},\"name\":\"a\"") != "");
  CHECK(broken("\"stream\":7,", "") != "");
  CHECK(broken("\"correlation\":12}", "\"correlation\":99}") != "");  // a launch without its work
  CHECK(broken(",\"flow_out\":true", "") != "");
  CHECK(broken("\"dur\":", "\"dur\":0.001,\"was\":") != "");  // not a multiple of 2^-10 us
  CHECK(broken("\"cat\":\"gpu_memcpy\"", "\"cat\":\"memcpy\"") != "");     // not a Kineto category
}
