// The inputs of the viewer tests: reports written in every format a viewer reads, into one folder.
//
//   scopeprof_viewer_samples OUTDIR
//
// host.*   a real run of host-only scopes: nested scopes on the main thread and a named worker thread, a
//          tight loop of parent/child pairs, and names a viewer must show as they are (quotes, braces,
//          non-ASCII, markup).
// gpu.*    a synthetic snapshot shaped like a CUPTI run on one device (no GPU needed): steps with device
//          spans on two streams, kernels and copies attributed to the scopes that launched them, a
//          kernel launched outside any scope; times far from zero, so that ts + dur in doubles rounds.
// tie.*    parents and children that end in the same nanosecond at large timestamps (the case where a
//          consumer that adds ts and dur in doubles may put the child's end after its parent's).
// rank0.*, rank1.*  the gpu sample as ranks 0 and 1 of a job (wall-clock bases 3 ms apart), for
//          `scopeprof merge rank0.trace.json rank1.trace.json -o merged.trace.json` (a CTest fixture).
//
// Each sample is written as OUTDIR/<name>.trace.json (Chrome trace), OUTDIR/<name>.json (JSON report),
// OUTDIR/<name>.speedscope.json (speedscope's format) and OUTDIR/<name>.html (HTML report).
// A writer added to the library for a viewer adds its file here, next to these.
#include <scopeprof.hpp>
#if __has_include(<scopeprof/detail/raw_snapshot.hpp>)
#include <scopeprof/detail/raw_snapshot.hpp>

#include "../cpu/raw_builders.hpp"
#endif

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

namespace {

using scopeprof::activity_kind;
using scopeprof::device_status;
using scopeprof::detail::raw_activity;
using scopeprof::detail::raw_instance;
using scopeprof::detail::raw_snapshot;

void spin(int n) {
  volatile int sink = 0;
  for (int i = 0; i < n; ++i) sink = sink + i;
}

scopeprof::report host_sample() {
  scopeprof::set_enabled(true);
  scopeprof::reset();
  std::thread worker([] {
    scopeprof::set_thread_name("loader");
    for (int i = 0; i < 20; ++i) {
      PROF_SCOPE("load \"batch\" {json}");
      spin(2000);
      PROF_SCOPE("</script><script>alert(1)</script>");  // must show as text in an HTML page
      spin(200);
    }
  });
  for (int step = 0; step < 5; ++step) {
    PROF_STEP();
    PROF_SCOPE("step");
    {
      PROF_SCOPE("forward");
      spin(5000);
      PROF_SCOPE("attention \xce\xb1\xce\xb2");  // Greek letters in UTF-8
      spin(3000);
    }
    for (int i = 0; i < 200; ++i) {
      PROF_SCOPE("iteration");
      PROF_SCOPE("compute");
    }
  }
  PROF_STEP();  // completes the fifth step
  worker.join();
  return scopeprof::collect();
}

raw_instance instance(std::uint32_t site, std::uint32_t depth, std::int64_t begin, std::int64_t end) {
  return sptest::host_record(site, depth, begin, end);
}

raw_instance device_instance(std::uint32_t site, std::uint32_t depth, std::int64_t begin, std::int64_t end,
                             std::uint64_t stream, std::int64_t dbegin, std::int64_t dend) {
  return sptest::device_timed(sptest::host_record(site, depth, begin, end), 0, stream, dbegin, dend);
}

// Declared work on a record (PROF_SCOPE_WORK's sums).
void declare(raw_instance& r, double bytes, double flops) {
  r.has_work = true;
  r.work_bytes = bytes;
  r.work_flops = flops;
}

// On thread 0, or outside any recorded scope (record -1).
raw_activity activity(activity_kind kind, std::int64_t record, std::uint32_t name, std::uint32_t stream,
                      std::int64_t begin, std::int64_t end) {
  return sptest::device_work(kind, record < 0 ? -1 : 0, record, name, stream, begin, end);
}

raw_snapshot finish(raw_snapshot s, const char* thread_name) {
  s.threads[0].desc.name = thread_name;
  s.threads[0].desc.os_id = 4242;
  auto& c = s.threads[0].desc.counts;
  c.entered = c.recorded = s.threads[0].records.size();
  s.counts = c;
  return s;
}

// Per step (10 us apart): step { linear (device span on stream 1 with a GEMM kernel); tail (five
// elementwise kernels on stream 1); copy (a memcpy on stream 2) }, post-order records.
raw_snapshot gpu_snapshot() {
  raw_snapshot s;
  for (const char* n : {"step", "linear", "tail", "copy"}) s.sites.push_back({n, "model.cu", "train", 1});
  s.activity_names = {"ampere_sgemm_128x64_tn", "void elementwise_kernel<float>(float*, int)", "[CUDA memcpy DtoH]",
                      "void stray_kernel()"};
  s.origin_ns = 1'733'000'000'123'456'789;  // a realistic steady-clock origin: ts values far from zero
  s.threads.emplace_back();
  s.sources.device_valid = true;
  s.sources.device = "synthetic CUDA event spans (viewer sample)";
  s.sources.cupti_valid = true;
  s.sources.cupti = "synthetic CUPTI records (viewer sample)";
  auto& recs = s.threads[0].records;
  const std::int64_t t0 = s.origin_ns + 5'000'000'001;
  for (int i = 0; i < 8; ++i) {
    const std::int64_t b = t0 + i * 100'003;
    const std::int64_t lin_d = b + 30'007, tail_d = b + 42'011, copy_d = b + 55'013;
    recs.push_back(device_instance(1, 1, b + 1'001, b + 9'003, 1, lin_d, lin_d + 12'000));
    const auto linear_rec = static_cast<std::int64_t>(recs.size()) - 1;
    declare(recs.back(), 3.0e6, 2.0e8);  // declared work: the GEMM's bytes and FLOPs
    recs.push_back(device_instance(2, 1, b + 9'500, b + 30'000, 1, tail_d, tail_d + 5 * 2'001));
    const auto tail_rec = static_cast<std::int64_t>(recs.size()) - 1;
    declare(recs.back(), 2.2e7, 4.0e6);
    recs.push_back(device_instance(3, 1, b + 30'100, b + 35'000, 2, copy_d, copy_d + 3'000));
    const auto copy_rec = static_cast<std::int64_t>(recs.size()) - 1;
    declare(recs.back(), 8.0e6, 0);
    recs.push_back(device_instance(0, 0, b, b + 40'000, 1, lin_d, copy_d + 3'000));
    s.activities.push_back(activity(activity_kind::kernel, linear_rec, 0, 7, lin_d, lin_d + 12'000));
    for (int k = 0; k < 5; ++k)
      s.activities.push_back(activity(activity_kind::kernel, tail_rec, 1, 7, tail_d + k * 2'001, tail_d + k * 2'001 + 2'000));
    s.activities.push_back(activity(activity_kind::memcpy, copy_rec, 2, 9, copy_d, copy_d + 3'000));
  }
  s.activities.push_back(activity(activity_kind::kernel, -1, 3, 7, t0 + 900'000, t0 + 901'000));
  scopeprof::device_peak peak;  // the device's peaks, as calibrate_device() leaves them
  peak.device = 0;
  peak.name = "Synthetic GPU";
  peak.cc_major = 9;
  peak.sm_count = 132;
  peak.l2_bytes = 50'000'000;
  peak.spec_bytes_per_s = 3.35e12;
  peak.spec_flops_per_s = 66.9e12;
  peak.measured_bytes_per_s = 3.0e12;
  peak.measured_flops_per_s = 57.3e12;
  peak.measured_note = "synthetic (viewer sample)";
  s.peaks.push_back(peak);
  // Step markers just before each step scope, and one after the last: ProfilerStep#0 .. #7.
  for (std::uint64_t i = 0; i <= 8; ++i)
    s.steps.push_back({i, 0, t0 + static_cast<std::int64_t>(i) * 100'003 - 1, 0});
  // The API calls that launched them (CUPTI's runtime records), on the main thread: one per activity,
  // 2 us each, from 200 ns after the launching scope began (the stray kernel's outside any scope).
  s.activity_names.push_back("cudaLaunchKernel");
  s.activity_names.push_back("cudaMemcpyAsync");
  std::int64_t previous_record = -2, next_call = 0;
  for (std::size_t i = 0; i < s.activities.size(); ++i) {
    raw_activity& a = s.activities[i];
    const std::int64_t scope_begin = a.record >= 0 ? recs[static_cast<std::size_t>(a.record)].host_begin_ns : t0 + 899'000;
    if (a.record != previous_record) next_call = scope_begin + 200;
    previous_record = a.record;
    a.correlation = static_cast<std::uint32_t>(100 + i);
    a.launch_name = a.kind == activity_kind::memcpy ? 5 : 4;
    a.launch_thread = 4242;
    a.launch_begin_ns = next_call;
    a.launch_end_ns = next_call + 2'000;
    next_call += 2'100;
  }
  return finish(std::move(s), "main");
}

// outer { inner } where both end in the same nanosecond, at timestamps whose microsecond values need
// more than a double's 15-16 significant digits once a fraction is added.
raw_snapshot tie_snapshot() {
  raw_snapshot s;
  for (const char* n : {"iteration", "compute"}) s.sites.push_back({n, "loop.cpp", "run", 1});
  s.origin_ns = 0;
  s.threads.emplace_back();
  auto& recs = s.threads[0].records;
  std::int64_t t = 9'876'543'210'123;  // about 2.7 hours after the origin
  for (int i = 0; i < 2000; ++i) {
    const std::int64_t b = t, e = t + 37 + (i % 11);
    recs.push_back(instance(1, 1, b + 3, e));
    recs.push_back(instance(0, 0, b, e));
    t = e + 1 + (i % 3);
  }
  return finish(std::move(s), "main");
}

bool write_all(const scopeprof::report& rep, const std::string& dir, const std::string& name) {
  bool ok = true;
  for (const auto& res : {rep.write_chrome_trace(dir + "/" + name + ".trace.json"), rep.write_json(dir + "/" + name + ".json"),
                          rep.write_speedscope(dir + "/" + name + ".speedscope.json"),
                          rep.write_html(dir + "/" + name + ".html")}) {
    if (!res) {
      std::fprintf(stderr, "scopeprof_viewer_samples: %s\n", res.message().c_str());
      ok = false;
    }
  }
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: scopeprof_viewer_samples OUTDIR\n");
    return 2;
  }
  const std::string dir = argv[1];
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    std::fprintf(stderr, "scopeprof_viewer_samples: cannot create %s: %s\n", dir.c_str(), ec.message().c_str());
    return 1;
  }
  bool ok = write_all(host_sample(), dir, "host");
  ok = write_all(scopeprof::detail::build_report(gpu_snapshot()), dir, "gpu") && ok;
  ok = write_all(scopeprof::detail::build_report(tie_snapshot()), dir, "tie") && ok;
  for (int rank = 0; rank < 2; ++rank) {
    raw_snapshot s = gpu_snapshot();
    s.process.rank = rank;
    s.process.world_size = 2;
    s.process.rank_source = "RANK";
    s.process.host = "node0";
    s.process.program = "viewer_sample";
    s.process.pid = 4242 + rank;
    s.process.base_unix_ns = 1'796'000'000'000'000'000 + rank * 3'000'000;
    ok = write_all(scopeprof::detail::build_report(std::move(s)), dir, "rank" + std::to_string(rank)) && ok;
  }
  return ok ? 0 : 1;
}
