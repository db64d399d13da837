// Device timing from CUDA events, checked on a real GPU against kernels of known duration. Every case
// first looks for a device and, without one, says so and passes; one case runs only without a device
// (the CI path): scopes still record host time and the report says why device time is n/a.
#include <scopeprof.hpp>
#include <scopeprof/backends/cuda_device.hpp>  // internals the test reads (the_devices, g_driver, event_census)
#include <scopeprof/backends/cuda_driver.hpp>

#include <doctest/doctest.h>

#include "gpu_support.cuh"
#include "gpu_test_helpers.cuh"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

TEST_CASE("gpu: without a CUDA device, scopes record host time and device time is n/a with the reason") {
  std::string why;
  if (scopeprof_gpu::device_available(why)) {
    MESSAGE("skipped: a CUDA device is present (this case checks the no-device path)");
    return;
  }
  MESSAGE("no CUDA device (" << why << "): checking the host-only fallback");
  scopeprof::reset();
  // Without a driver the runtime's error is permanent (every cudaPeekAtLastError returns it), so the
  // check is that scopeprof leaves it exactly as it was.
  const cudaError_t pending_before = cudaPeekAtLastError();
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 3; ++i) {
    PROF_SCOPE("nodev_outer");
    { PROF_SCOPE_STREAM("nodev_stream", nullptr); }
    { PROF_SCOPE_HOST("nodev_host"); }
  }
  scopeprof::set_device_sampling(2);
  { PROF_SCOPE("nodev_sampled"); }
  scopeprof::set_device_sampling(1);
  // scopeprof must not leave an error of its own for the program to find.
  CHECK_MESSAGE(cudaPeekAtLastError() == pending_before, "pending CUDA error after scopes: " << err(cudaPeekAtLastError())
                                                                                           << ", before: " << err(pending_before));
  const scopeprof::report r = scopeprof::collect();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK_MESSAGE(seconds < 5.0, "scopes and collect() took " << seconds << " s without a device");
  CHECK_MESSAGE(cudaPeekAtLastError() == pending_before, "pending CUDA error after collect(): " << err(cudaPeekAtLastError()));

  INFO(evidence(r));
  const std::string& dev = r.sources().device;
  CHECK_MESSAGE(dev.rfind("n/a", 0) == 0, "device evidence should start with n/a");
  CHECK_MESSAGE(dev.size() > 6, "device evidence should name the reason");
  CHECK_MESSAGE(dev.find('(') != std::string::npos, "device evidence should give the reason in parentheses");
  CHECK_FALSE(r.sources().device_valid);

  const auto& outer = row(r, "nodev_outer");
  CHECK(outer.calls == 3);
  CHECK(outer.host_total_ns > 0);
  CHECK(outer.device_calls == 0);
  CHECK(row(r, "nodev_stream").calls == 3);
  CHECK(row(r, "nodev_host").calls == 3);
  CHECK(row(r, "nodev_sampled").calls == 1);
  CHECK(r.counts().recorded == 10);
  REQUIRE(r.instances().size() == 10);
  for (const auto& s : r.instances()) {
    CHECK_MESSAGE(s.device == scopeprof::device_status::not_timed,
                  r.sites()[s.site].name << " has device status " << status_name(s.device));
    CHECK(s.host_end_ns >= s.host_begin_ns);
  }
  // The text report prints too.
  CHECK(r.to_string().find("n/a") != std::string::npos);
  scopeprof::reset();
}

TEST_CASE("gpu a: a 200 us kernel's device span is 200 us and covers the kernel's own measurement") {
  SCOPEPROF_GPU_OR_SKIP();
  warm_up();
  constexpr int reps = 20;
  unsigned long long* d_times = nullptr;
  CUDA_CHECK(cudaMalloc(&d_times, sizeof(unsigned long long) * 2 * reps));
  // Reference: a raw event pair around the same gated kernel. Between an event and a kernel the GPU
  // takes a few microseconds of its own (about 3 us on an H200); the scope should see what CUDA events
  // see, so its span is compared with 200 us plus that latency, measured here.
  cudaEvent_t raw_b = nullptr, raw_e = nullptr;
  CUDA_CHECK(cudaEventCreate(&raw_b));
  CUDA_CHECK(cudaEventCreate(&raw_e));
  std::vector<double> raw_spans;
  for (int i = 0; i < reps; ++i) {
    CUDA_CHECK(spin(50));
    CUDA_CHECK(cudaEventRecord(raw_b, nullptr));
    CUDA_CHECK(spin(200));
    CUDA_CHECK(cudaEventRecord(raw_e, nullptr));
    CUDA_CHECK(cudaEventSynchronize(raw_e));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, raw_b, raw_e));
    raw_spans.push_back(static_cast<double>(ms) * 1e6);
  }
  CUDA_CHECK(cudaEventDestroy(raw_b));
  CUDA_CHECK(cudaEventDestroy(raw_e));
  for (int i = 0; i < reps; ++i) {
    // A gate kernel keeps the GPU busy while the scope's begin event and the kernel are queued, so the
    // span holds the kernel, not the host's launch latency.
    CUDA_CHECK(spin(50));
    {
      PROF_SCOPE("spin200");
      CUDA_CHECK(spin(200, nullptr, d_times + 2 * i));
    }
    CUDA_CHECK(cudaDeviceSynchronize());
  }
  std::vector<unsigned long long> times(2 * reps);
  CUDA_CHECK(cudaMemcpy(times.data(), d_times, sizeof(unsigned long long) * 2 * reps, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaFree(d_times));
  const scopeprof::report r = scopeprof::collect();
  INFO(evidence(r));
  CHECK(r.sources().device_valid);
  const auto inst = instances_named(r, "spin200");
  REQUIRE(inst.size() == reps);
  std::vector<double> spans, selfs;
  for (int i = 0; i < reps; ++i) {
    CHECK_MESSAGE(inst[i].device == scopeprof::device_status::ok, "repetition " << i << ": " << status_name(inst[i].device));
    const double span = static_cast<double>(inst[i].device_span_ns());
    const double self = static_cast<double>(times[2 * i + 1] - times[2 * i]);
    spans.push_back(span);
    selfs.push_back(self);
    // Events and %globaltimer tick differently (about 0.5 us and 1 us): allow one tick per instance.
    TIMING_CHECK(span >= self - 1.0 * us, "repetition " << i << ": span " << span / us << " us < kernel's own " << self / us << " us");
  }
  const double med = median(spans), med_self = median(selfs), med_raw = median(raw_spans);
  const double latency = med_raw - 200 * us;  // the GPU's own event-to-kernel latency
  MESSAGE("spin200: median device span " << med / us << " us (min " << *std::min_element(spans.begin(), spans.end()) / us
                                         << ", max " << *std::max_element(spans.begin(), spans.end()) / us
                                         << "), kernel's own median " << med_self / us << " us, raw event pair median "
                                         << med_raw / us << " us (event latency " << latency / us << " us)");
  const double tolerance = std::max(0.01 * 200 * us, 2 * us);
  TIMING_CHECK(std::abs(med - (200 * us + latency)) <= tolerance,
               "median span " << med / us << " us is not within " << tolerance / us << " us of 200 us + the raw event latency "
                              << latency / us << " us");
  TIMING_CHECK((latency >= -1 * us && latency <= 10 * us),
               "a raw event pair around a 200 us kernel measures " << med_raw / us << " us: the GPU is not idle, or events are off");
  TIMING_CHECK(med >= med_self, "median span " << med / us << " us < kernel's own median " << med_self / us << " us");
  const auto& f = row(r, "spin200");
  CHECK(f.calls == reps);
  CHECK(f.device_calls == reps);
  CHECK(f.device.count == reps);
}

TEST_CASE("gpu b: a scope does not wait for its kernel") {
  SCOPEPROF_GPU_OR_SKIP();
  warm_up();
  bool still_running = false;
  {
    PROF_SCOPE("no_sync");
    CUDA_CHECK(spin(2000));
  }
  // Right after the scope the kernel must still be running: nothing in the scope waited for it.
  still_running = cudaStreamQuery(nullptr) == cudaErrorNotReady;
  (void)cudaGetLastError();
  CUDA_CHECK(cudaDeviceSynchronize());  // only now, after the scope ended
  const scopeprof::report r = scopeprof::collect();
  INFO(evidence(r));
  TIMING_CHECK(still_running, "the 2 ms kernel had already finished when the scope ended");
  const auto inst = instances_named(r, "no_sync");
  REQUIRE(inst.size() == 1);
  REQUIRE_MESSAGE(inst[0].device == scopeprof::device_status::ok, status_name(inst[0].device));
  const double host = static_cast<double>(inst[0].host_total_ns());
  const double span = static_cast<double>(inst[0].device_span_ns());
  MESSAGE("no_sync: host " << host / us << " us, device span " << span / us << " us");
  TIMING_CHECK(span >= 2000 * us, "span " << span / us << " us is shorter than the 2 ms kernel");
  TIMING_CHECK(host < 0.25 * span, "host time " << host / us << " us is not below a quarter of the device span " << span / us << " us");
}

TEST_CASE("gpu c: scopes on two concurrent streams have their own spans, overlap, and separate tracks") {
  SCOPEPROF_GPU_OR_SKIP();
  warm_up();
  cudaStream_t s1 = nullptr, s2 = nullptr;
  CUDA_CHECK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
  CUDA_CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
  // Gates on both streams: each scope's begin event waits for its gate, so host launch latency stays out.
  CUDA_CHECK(spin(50, s1));
  CUDA_CHECK(spin(50, s2));
  {
    PROF_SCOPE_STREAM("stream_a", s1);
    CUDA_CHECK(spin(300, s1));
  }
  {
    PROF_SCOPE_STREAM("stream_b", s2);
    CUDA_CHECK(spin(200, s2));
  }
  CUDA_CHECK(cudaDeviceSynchronize());
  const scopeprof::report r = scopeprof::collect();
  INFO(evidence(r));
  const auto a = instances_named(r, "stream_a");
  const auto b = instances_named(r, "stream_b");
  REQUIRE(a.size() == 1);
  REQUIRE(b.size() == 1);
  REQUIRE_MESSAGE(a[0].device == scopeprof::device_status::ok, status_name(a[0].device));
  REQUIRE_MESSAGE(b[0].device == scopeprof::device_status::ok, status_name(b[0].device));
  const double span_a = static_cast<double>(a[0].device_span_ns()), span_b = static_cast<double>(b[0].device_span_ns());
  MESSAGE("stream_a: " << span_a / us << " us on [" << a[0].device_begin_ns << ", " << a[0].device_end_ns << "]; stream_b: "
                       << span_b / us << " us on [" << b[0].device_begin_ns << ", " << b[0].device_end_ns << "]");
  TIMING_CHECK((span_a >= 299 * us && span_a <= 310 * us), "stream_a span " << span_a / us << " us, expected ~300");
  TIMING_CHECK((span_b >= 199 * us && span_b <= 210 * us), "stream_b span " << span_b / us << " us, expected ~200");
  TIMING_CHECK((a[0].device_begin_ns < b[0].device_end_ns && b[0].device_begin_ns < a[0].device_end_ns),
                "the two spans do not overlap in time");
  CHECK(a[0].stream != b[0].stream);
  CHECK(a[0].stream == reinterpret_cast<std::uint64_t>(s1));
  CHECK(b[0].stream == reinterpret_cast<std::uint64_t>(s2));
  scopeprof::reset();
  CUDA_CHECK(cudaStreamDestroy(s1));
  CUDA_CHECK(cudaStreamDestroy(s2));
}

TEST_CASE("gpu d: a parent's device self time excludes its children's spans") {
  SCOPEPROF_GPU_OR_SKIP();
  warm_up();
  CUDA_CHECK(spin(100));  // gate: the parent's begin event waits for it
  {
    PROF_SCOPE("parent");
    CUDA_CHECK(spin(50));
    {
      PROF_SCOPE("child_1");
      CUDA_CHECK(spin(100));
    }
    {
      PROF_SCOPE("child_2");
      CUDA_CHECK(spin(100));
    }
  }
  CUDA_CHECK(cudaDeviceSynchronize());
  const scopeprof::report r = scopeprof::collect();
  INFO(evidence(r));
  const auto& parent = row(r, "parent");
  const auto& c1 = row(r, "child_1");
  const auto& c2 = row(r, "child_2");
  REQUIRE(parent.device_calls == 1);
  REQUIRE(c1.device_calls == 1);
  REQUIRE(c2.device_calls == 1);
  MESSAGE("parent span " << parent.device_total_ns / us << " us, self " << parent.device_self_ns / us << " us; children "
                         << c1.device_total_ns / us << " and " << c2.device_total_ns / us << " us");
  // Each kernel and each event between kernels adds about 1.5 to 3 us of GPU latency (five events and
  // three kernels inside the parent): the span gets 20 us, the self time and the children 10 us.
  const auto near = [](std::int64_t ns, double expected_us, double tol_us) { return std::abs(ns / us - expected_us) <= tol_us; };
  TIMING_CHECK(near(parent.device_total_ns, 250, 20), "parent span " << parent.device_total_ns / us << " us, expected 250 +- 20");
  TIMING_CHECK(near(parent.device_self_ns, 50, 10), "parent self " << parent.device_self_ns / us << " us, expected 50 +- 10");
  TIMING_CHECK(near(c1.device_total_ns, 100, 10), "child_1 span " << c1.device_total_ns / us << " us, expected 100 +- 10");
  TIMING_CHECK(near(c2.device_total_ns, 100, 10), "child_2 span " << c2.device_total_ns / us << " us, expected 100 +- 10");
  CHECK(c1.device_self_ns == c1.device_total_ns);
  // The children lie inside the parent on its stream and do not overlap: span = self + both children
  // (to within the rounding of the mapped times).
  const std::int64_t unexplained = parent.device_total_ns - parent.device_self_ns - c1.device_total_ns - c2.device_total_ns;
  CHECK_MESSAGE(std::abs(unexplained) <= 1000, "parent span - self - children = " << unexplained
                                                                                  << " ns: the children's mapped intervals are not inside the parent's");
  // The children are inside the parent in the tree.
  const auto inst = instances_named(r, "child_1");
  REQUIRE(inst.size() == 1);
  REQUIRE(inst[0].parent >= 0);
  CHECK(r.sites()[r.instances()[static_cast<std::size_t>(inst[0].parent)].site].name == "parent");
}

TEST_CASE("gpu e: scopes inside a graph capture keep the capture valid and time every replay") {
  SCOPEPROF_GPU_OR_SKIP();
  warm_up();
  cudaStream_t s = nullptr, s2 = nullptr;
  CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CUDA_CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));

  // Capture. No REQUIRE until the capture is ended: a thrown failure would leave it open and break the
  // cases after this one.
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  cudaError_t begin_err = cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  cudaError_t launch_err = cudaSuccess, end_err = cudaSuccess;
  if (begin_err == cudaSuccess) {
    {
      PROF_SCOPE_STREAM("captured", s);
      launch_err = spin(100, s);
    }
    end_err = cudaStreamEndCapture(s, &graph);
  }
  CHECK_MESSAGE(begin_err == cudaSuccess, "cudaStreamBeginCapture: " << err(begin_err));
  CHECK_MESSAGE(launch_err == cudaSuccess, "launch during capture: " << err(launch_err));
  REQUIRE_MESSAGE(end_err == cudaSuccess, "cudaStreamEndCapture failed: " << err(end_err) << ": the scope invalidated the capture");
  REQUIRE(graph != nullptr);
  CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));

  constexpr int replays = 10;
  for (int i = 0; i < replays; ++i) {
    CUDA_CHECK(spin(50, s));  // gate: the replay scope's begin event waits for it
    {
      PROF_SCOPE_STREAM("replay", s);
      CUDA_CHECK(cudaGraphLaunch(exec, s));
    }
  }
  CUDA_CHECK(cudaDeviceSynchronize());

  // collect() while a second capture is open on another stream must leave that capture intact.
  cudaGraph_t graph2 = nullptr;
  begin_err = cudaStreamBeginCapture(s2, cudaStreamCaptureModeGlobal);
  launch_err = cudaSuccess;
  end_err = cudaSuccess;
  scopeprof::report r;
  if (begin_err == cudaSuccess) {
    {
      PROF_SCOPE_STREAM("captured_open", s2);
      launch_err = spin(10, s2);
    }
    r = scopeprof::collect();
    end_err = cudaStreamEndCapture(s2, &graph2);
  }
  CHECK_MESSAGE(begin_err == cudaSuccess, "second cudaStreamBeginCapture: " << err(begin_err));
  CHECK_MESSAGE(launch_err == cudaSuccess, "launch during the second capture: " << err(launch_err));
  CHECK_MESSAGE(end_err == cudaSuccess, "second cudaStreamEndCapture failed after collect(): " << err(end_err));
  CHECK(graph2 != nullptr);

  INFO(evidence(r));
  const auto rep = instances_named(r, "replay");
  CHECK(rep.size() == replays);
  for (std::size_t i = 0; i < rep.size(); ++i) {
    CHECK_MESSAGE(rep[i].device == scopeprof::device_status::ok, "replay " << i << ": " << status_name(rep[i].device));
    const double span = static_cast<double>(rep[i].device_span_ns());
    TIMING_CHECK(std::abs(span - 100 * us) <= 10 * us, "replay " << i << ": span " << span / us << " us, expected ~100");
  }
  const auto cap = instances_named(r, "captured");
  CHECK(cap.size() == 1);
  if (cap.size() == 1) {
    CHECK_MESSAGE(cap[0].device == scopeprof::device_status::ok, "captured: " << status_name(cap[0].device));
    const double span = static_cast<double>(cap[0].device_span_ns());
    MESSAGE("captured (last replay): " << span / us << " us; replay spans: " << (rep.empty() ? 0.0 : rep.front().device_span_ns() / us)
                                       << " .. " << (rep.empty() ? 0.0 : rep.back().device_span_ns() / us) << " us");
    TIMING_CHECK(std::abs(span - 100 * us) <= 10 * us, "captured span " << span / us << " us, expected ~100");
  }
  const auto open = instances_named(r, "captured_open");
  CHECK(open.size() == 1);
  if (open.size() == 1)
    CHECK_MESSAGE(open[0].device == scopeprof::device_status::captured,
                  "scope in a still-open capture: " << status_name(open[0].device));

  // Forget the records while the streams still exist (captured records name their stream), then clean up.
  scopeprof::reset();
  if (graph2 != nullptr) CHECK(cudaGraphDestroy(graph2) == cudaSuccess);
  CHECK(cudaGraphExecDestroy(exec) == cudaSuccess);
  CHECK(cudaGraphDestroy(graph) == cudaSuccess);
  CHECK(cudaStreamDestroy(s) == cudaSuccess);
  CHECK(cudaStreamDestroy(s2) == cudaSuccess);
  CHECK(cudaDeviceSynchronize() == cudaSuccess);
}

TEST_CASE("gpu f: a steady state creates no CUDA events") {
  SCOPEPROF_GPU_OR_SKIP();
  warm_up();
  const auto run = [] {
    for (int i = 0; i < 200; ++i) {
      PROF_SCOPE("steady");
    }
  };
  {
    // The drain recycles nothing while this is held (scopes never take it): the pool grows to the 400
    // events that 200 scopes hold at once. Otherwise it grows to what was in flight while the drain
    // recycled, which depends on the drain's timing, and the next run may need more.
    std::lock_guard<std::mutex> no_drain(scopeprof::detail::the_registry().collect_mu);
    run();
  }
  CUDA_CHECK(cudaDeviceSynchronize());
  (void)scopeprof::collect();  // resolves the 200 pairs and recycles their events
  auto& devices = scopeprof::detail::the_devices();
  REQUIRE(!devices.devices.empty());
  const std::uint64_t created = devices.devices[0]->events_created;
  run();
  CUDA_CHECK(cudaDeviceSynchronize());
  const scopeprof::report r = scopeprof::collect();
  INFO(evidence(r));
  const std::uint64_t created_after = devices.devices[0]->events_created;
  MESSAGE("events created: " << created << " after the warm-up, " << created_after << " after 200 more scopes");
  CHECK(created_after == created);
  CHECK(row(r, "steady").device_calls == 400);
}

namespace {
void sampled_entry() { PROF_SCOPE("sampled"); }
}  // namespace

TEST_CASE("gpu g: set_device_sampling(name, 4) device-times every 4th entry") {
  SCOPEPROF_GPU_OR_SKIP();
  warm_up();
  sampled_entry();  // registers the site, so the per-name setting finds it
  CHECK(scopeprof::set_device_sampling("sampled", 4) == 1);
  scopeprof::reset();
  for (int i = 0; i < 100; ++i) sampled_entry();
  CUDA_CHECK(cudaDeviceSynchronize());
  const scopeprof::report r = scopeprof::collect();
  scopeprof::set_device_sampling(1);
  INFO(evidence(r));
  const auto& f = row(r, "sampled");
  CHECK(f.calls == 100);
  CHECK(f.device_calls == 25);
}

TEST_CASE("gpu h: device intervals are placed inside the host timeline of their scopes") {
  SCOPEPROF_GPU_OR_SKIP();
  warm_up();
  for (int i = 0; i < 50; ++i) {
    {
      PROF_SCOPE("aligned");
      CUDA_CHECK(spin(1));
    }
    if (i % 10 == 9) CUDA_CHECK(cudaDeviceSynchronize());
  }
  CUDA_CHECK(cudaDeviceSynchronize());
  const scopeprof::report r = scopeprof::collect();
  INFO(evidence(r));
  const auto inst = instances_named(r, "aligned");
  REQUIRE(inst.size() == 50);
  std::int64_t min_lead = INT64_MAX, max_lag = INT64_MIN;
  int ok = 0;
  for (const auto& s : r.instances()) {
    if (s.device != scopeprof::device_status::ok) continue;
    ++ok;
    min_lead = std::min(min_lead, s.device_begin_ns - s.host_begin_ns);
    max_lag = std::max(max_lag, s.device_begin_ns - s.host_end_ns);
    CHECK_MESSAGE(s.device_begin_ns >= s.host_begin_ns, r.sites()[s.site].name << ": device begins " << (s.host_begin_ns - s.device_begin_ns)
                                                                               << " ns before its host scope");
    TIMING_CHECK(s.device_begin_ns <= s.host_end_ns + 50'000'000, r.sites()[s.site].name << ": device begins "
                                                                                         << (s.device_begin_ns - s.host_end_ns) / 1e6
                                                                                         << " ms after its host scope ended");
  }
  CHECK(ok == 50);
  MESSAGE("device begin - host begin: min " << min_lead / us << " us; device begin - host end: max " << max_lag / us << " us");
}

namespace {
void host_only_entry() { PROF_SCOPE_HOST("host_only_site"); }
}  // namespace

TEST_CASE("gpu i: PROF_SCOPE_HOST stays host-only when device sampling is set afterwards") {
  SCOPEPROF_GPU_OR_SKIP();
  warm_up();
  host_only_entry();  // registers the site
  // The global setting applies to every site, but a host-only site never records CUDA events.
  scopeprof::set_device_sampling(1);
  scopeprof::reset();
  for (int i = 0; i < 10; ++i) host_only_entry();
  CUDA_CHECK(cudaDeviceSynchronize());
  // (Values are read before the checks: doctest evaluates a message lazily, inside its reporter, where
  // row()'s own REQUIRE must not run.)
  scopeprof::report r = scopeprof::collect();
  INFO(evidence(r));
  const std::uint64_t calls_global = row(r, "host_only_site").calls;
  const std::uint64_t timed_global = row(r, "host_only_site").device_calls;
  CHECK(calls_global == 10);
  CHECK_MESSAGE(timed_global == 0, "after set_device_sampling(1), PROF_SCOPE_HOST scopes were device-timed (" << timed_global
                                                                                                           << " of 10)");
  // Likewise when the site is named.
  scopeprof::set_device_sampling("host_only_site", 1);
  scopeprof::reset();
  for (int i = 0; i < 10; ++i) host_only_entry();
  CUDA_CHECK(cudaDeviceSynchronize());
  r = scopeprof::collect();
  const std::uint64_t timed_named = row(r, "host_only_site").device_calls;
  CHECK_MESSAGE(timed_named == 0, "after set_device_sampling(\"host_only_site\", 1), PROF_SCOPE_HOST scopes were device-timed ("
                                      << timed_named << " of 10)");
  scopeprof::set_device_sampling(1);
  scopeprof::reset();
}

namespace {
// One gated 100 us kernel in a scope; returns the scope's device span in ns (or -1 if not timed).
double one_timed_span(const char* what) {
  CUDA_CHECK(spin(50));
  {
    PROF_SCOPE("span100");
    CUDA_CHECK(spin(100));
  }
  CUDA_CHECK(cudaDeviceSynchronize());
  const scopeprof::report r = scopeprof::collect();
  INFO(what << ": " << evidence(r));
  const auto inst = instances_named(r, "span100");
  scopeprof::reset();
  if (inst.size() != 1 || inst[0].device != scopeprof::device_status::ok) return -1;
  return static_cast<double>(inst[0].device_span_ns());
}
}  // namespace

TEST_CASE("gpu j: the runtime fallback (no driver entry points) and a fresh thread time the same span") {
  SCOPEPROF_GPU_OR_SKIP();
  warm_up();
  REQUIRE_MESSAGE(scopeprof::detail::g_driver.ok, "the driver entry points were not found: scopes use the runtime path");
  const double driver_span = one_timed_span("driver calls");
  // The runtime path: what a driver without cudaGetDriverEntryPoint support gets.
  const scopeprof::detail::driver_calls saved = scopeprof::detail::g_driver;
  scopeprof::detail::g_driver.ok = false;
  const double runtime_span = one_timed_span("runtime calls");
  scopeprof::detail::g_driver = saved;
  // A thread whose first CUDA call is inside its first scope: no context is current on it when the scope
  // begins, so the begin goes through the runtime. (No doctest assertion in the thread: they would throw there.)
  cudaError_t thread_error = cudaSuccess;
  std::thread t([&] {
    {
      PROF_SCOPE("fresh_thread_span100");
      thread_error = spin(100);
    }
    if (thread_error == cudaSuccess) thread_error = cudaDeviceSynchronize();
  });
  t.join();
  REQUIRE_MESSAGE(thread_error == cudaSuccess, err(thread_error));
  const scopeprof::report r = scopeprof::collect();
  INFO(evidence(r));
  const auto inst = instances_named(r, "fresh_thread_span100");
  REQUIRE(inst.size() == 1);
  CHECK_MESSAGE(inst[0].device == scopeprof::device_status::ok, status_name(inst[0].device));
  const double thread_span = static_cast<double>(inst[0].device_span_ns());
  scopeprof::reset();
  MESSAGE("100 us kernel: span " << driver_span / us << " us (driver calls), " << runtime_span / us << " us (runtime calls), "
                                 << thread_span / us << " us (fresh thread, ungated: includes its launch latency)");
  REQUIRE(driver_span > 0);
  REQUIRE(runtime_span > 0);
  TIMING_CHECK(std::abs(runtime_span - driver_span) <= std::max(0.01 * driver_span, 2 * us),
               "runtime-path span " << runtime_span / us << " us vs driver-path span " << driver_span / us << " us");
  TIMING_CHECK(driver_span >= 100 * us, "span " << driver_span / us << " us is shorter than the 100 us kernel");
  TIMING_CHECK(thread_span >= 100 * us, "fresh-thread span " << thread_span / us << " us is shorter than the 100 us kernel");
}

TEST_CASE("gpu k: a scope leaves the program's pending CUDA error where it was") {
  SCOPEPROF_GPU_OR_SKIP();
  warm_up();
  // A launch with an impossible block size leaves a non-sticky error for cudaGetLastError: first without
  // a scope, to learn which error the program sees, then with one.
  scopeprof_gpu::spin_kernel<<<1, 4096>>>(0, nullptr);
  const cudaError_t expected = cudaGetLastError();
  REQUIRE_MESSAGE(expected != cudaSuccess, "a 4096-thread block launched without error");
  scopeprof_gpu::spin_kernel<<<1, 4096>>>(0, nullptr);
  {
    PROF_SCOPE("with_pending_error");
    CUDA_CHECK(cudaDeviceSynchronize());
  }
  const cudaError_t seen = cudaGetLastError();
  CHECK_MESSAGE(seen == expected, "the program saw " << err(seen) << " instead of its own launch error " << err(expected));
  CHECK(cudaGetLastError() == cudaSuccess);
  // And no error appears where the program had none.
  {
    PROF_SCOPE("without_pending_error");
    CUDA_CHECK(spin(1));
  }
  CHECK(cudaPeekAtLastError() == cudaSuccess);
  CUDA_CHECK(cudaDeviceSynchronize());
  const scopeprof::report r = scopeprof::collect();
  INFO(evidence(r));
  CHECK(r.sources().device_valid);
  CHECK(row(r, "with_pending_error").device_calls == 1);
  scopeprof::reset();
}
