// The life of CUDA events and of device set-up, on a real GPU: events stay bounded over many threads and
// collects, reset() never waits for the GPU, a scope open across several collects still gets a right
// span, and a thread's one-time set-up is charged to no scope. Without a device every case says so and
// passes. Case p: a drain pass meeting unfinished device work asks by queries (run under memcheck too).
// Case q: a pass resolves the finished part of each stream's scopes with a few queries, and only that part.
#include <scopeprof.hpp>
#include <scopeprof/backends/cuda_device.hpp>  // internals the test reads (the_devices, g_driver, event_census)
#include <scopeprof/backends/cuda_driver.hpp>
#include <scopeprof/detail/drain.hpp>       // a drain pass run by hand (case p)

#include <doctest/doctest.h>

#include "gpu_support.cuh"
#include "gpu_test_helpers.cuh"

#include <chrono>
#include <mutex>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

namespace {

std::uint64_t live_pool_events() {
  const auto c = scopeprof::detail::event_census(0);
  return c.created - c.destroyed;
}

double elapsed_ms(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - since).count();
}

}  // namespace

TEST_CASE("gpu l: events stay bounded over 1000 threads and 1000 collects") {
  SCOPEPROF_GPU_OR_SKIP();
  warm_up();
  const std::uint64_t created_before = scopeprof::detail::event_census(0).created;
  std::uint64_t timed = 0;
  // 250 batches of 4 short threads, 5 device-timed scopes each, and a collect() after each batch: at most
  // 20 scopes (40 events) are unresolved at a time, and each thread's cache (up to 32 events) must go back
  // to the pool when the thread exits, or every new thread takes fresh ones.
  for (int batch = 0; batch < 250; ++batch) {
    std::vector<std::thread> threads;
    for (int i = 0; i < 4; ++i)
      threads.emplace_back([] {
        (void)cudaSetDevice(0);
        for (int k = 0; k < 5; ++k) {
          PROF_SCOPE("short_thread");
        }
      });
    for (auto& t : threads) t.join();
    CUDA_CHECK(cudaDeviceSynchronize());
    const scopeprof::report r = scopeprof::collect();
    if (const scopeprof::flat_row* f = r.find("short_thread")) timed = f->device_calls;
  }
  CHECK(timed == 5000);
  const auto after_threads = scopeprof::detail::event_census(0);
  for (int i = 0; i < 750; ++i) (void)scopeprof::collect();
  const auto after = scopeprof::detail::event_census(0);
  MESSAGE("pool events created: " << created_before << " before, " << after_threads.created << " after 1000 threads, "
                                  << after.created << " after 1000 collects; destroyed " << after.destroyed
                                  << "; reference events held: " << after.references);
  // In flight (40) plus four threads' caches and the collecting thread's (5 x 32).
  CHECK(after_threads.created - created_before <= 40 + 5 * 32);
  CHECK(after.created == after_threads.created);
  CHECK(after.references <= 3);
  scopeprof::reset();
}

TEST_CASE("gpu m: reset() does not wait for the GPU, and events of discarded scopes come back") {
  SCOPEPROF_GPU_OR_SKIP();
  warm_up();
  const std::uint64_t live_before = live_pool_events();
  {
    PROF_SCOPE("busy");
    CUDA_CHECK(spin(300 * 1000.0));  // 300 ms on the GPU
  }
  const auto t0 = std::chrono::steady_clock::now();
  scopeprof::reset();
  const double reset_ms = elapsed_ms(t0);
  MESSAGE("reset() with a 300 ms kernel in flight took " << reset_ms << " ms");
  CHECK(reset_ms < 100);
  CUDA_CHECK(cudaDeviceSynchronize());
  for (int i = 0; i < 100; ++i) {
    PROF_SCOPE("after_reset");
  }
  CUDA_CHECK(cudaDeviceSynchronize());
  const scopeprof::report r = scopeprof::collect();
  INFO(evidence(r));
  CHECK(r.find("busy") == nullptr);
  CHECK(row(r, "after_reset").device_calls == 100);
  CHECK(scopeprof::detail::the_devices().retired.empty());
  // The pool now holds every event, the discarded scope's too: the same work again creates none.
  const std::uint64_t created = scopeprof::detail::event_census(0).created;
  for (int i = 0; i < 100; ++i) {
    PROF_SCOPE("after_reset");
  }
  CUDA_CHECK(cudaDeviceSynchronize());
  const scopeprof::report again = scopeprof::collect();
  CHECK(row(again, "after_reset").device_calls == 200);
  MESSAGE("live events: " << live_before << " before, " << live_pool_events() << " after; created "
                          << created << " -> " << scopeprof::detail::event_census(0).created);
  CHECK(scopeprof::detail::event_census(0).created == created);
}

TEST_CASE("gpu n: a scope open across several collects gets its span placed inside its host time") {
  SCOPEPROF_GPU_OR_SKIP();
  warm_up();
  {
    PROF_SCOPE("long_open");
    CUDA_CHECK(spin(100));
    for (int i = 0; i < 4; ++i) {
      CUDA_CHECK(cudaDeviceSynchronize());
      (void)scopeprof::collect();  // each adds a reference and drops the old ones this scope began against
    }
    CUDA_CHECK(spin(100));
  }
  CUDA_CHECK(cudaDeviceSynchronize());
  const scopeprof::report r = scopeprof::collect();
  INFO(evidence(r));
  const auto inst = instances_named(r, "long_open");
  REQUIRE(inst.size() == 1);
  const auto& s = inst[0];
  REQUIRE(status_name(s.device) == "ok");
  MESSAGE("host [" << s.host_begin_ns << ", " << s.host_end_ns << "] device [" << s.device_begin_ns << ", "
                   << s.device_end_ns << "] span " << s.device_span_ns() / us << " us");
  CHECK(s.device_span_ns() >= 200 * us);
  TIMING_CHECK(s.device_begin_ns >= s.host_begin_ns, "device begin before host begin by " << s.host_begin_ns - s.device_begin_ns << " ns");
  TIMING_CHECK(s.device_begin_ns <= s.host_end_ns, "device begin after host end");
  scopeprof::reset();
}

TEST_CASE("gpu o: a new thread's first device-timed scope carries none of the thread's set-up") {
  SCOPEPROF_GPU_OR_SKIP();
  warm_up();
  double first_us = 0, later_us = 0;
  std::thread t([&] {
    CUDA_CHECK(cudaSetDevice(0));
    CUDA_CHECK(cudaFree(nullptr));  // the thread has a context before its first scope
    { PROF_SCOPE("new_thread_first"); }
    for (int i = 0; i < 50; ++i) {
      PROF_SCOPE("new_thread_later");
    }
  });
  t.join();
  CUDA_CHECK(cudaDeviceSynchronize());
  const scopeprof::report r = scopeprof::collect();
  INFO(evidence(r));
  first_us = static_cast<double>(row(r, "new_thread_first").host_total_ns) / us;
  later_us = row(r, "new_thread_later").host.median / us;
  MESSAGE("first scope on a new thread: host " << first_us << " us; later scopes: median " << later_us << " us");
  CHECK(row(r, "new_thread_first").device_calls == 1);
  TIMING_CHECK(first_us < 10 * later_us + 50, "first scope carried " << first_us << " us");
  CHECK(r.sources().device.find("one-time set-up") != std::string::npos);
  scopeprof::reset();
}

TEST_CASE("gpu p: a background pass over a scope whose kernel still runs asks, never fails, and leaves it for later") {
  SCOPEPROF_GPU_OR_SKIP();
  warm_up();
  scopeprof::reset();
  {
    PROF_SCOPE("still_running");
    CUDA_CHECK(spin(200000));  // 200 ms
  }
  REQUIRE(cudaStreamQuery(nullptr) == cudaErrorNotReady);
  {
    // What the drain thread does every few ms. Its question must be a query: cudaEventElapsedTime on the
    // unfinished pair returns cudaErrorNotReady, which compute-sanitizer counts as the program's API error
    // (tools/gpu-quick.sh runs this suite under memcheck with --error-exitcode).
    scopeprof::detail::registry& reg = scopeprof::detail::the_registry();
    std::lock_guard<std::mutex> serial(reg.collect_mu);
    scopeprof::detail::drain_pass(reg, scopeprof::detail::the_drain(), scopeprof::detail::view_registry(reg),
                                  scopeprof::detail::pass_kind::fold, scopeprof::detail::pass_scope::background);
  }
  CHECK(cudaPeekAtLastError() == cudaSuccess);
  CUDA_CHECK(cudaDeviceSynchronize());
  const scopeprof::report r = scopeprof::collect();
  INFO(evidence(r));
  const auto inst = instances_named(r, "still_running");
  REQUIRE(inst.size() == 1);
  REQUIRE(status_name(inst[0].device) == "ok");  // left pending by the pass, not given up
  CHECK(inst[0].device_span_ns() >= 200000 * us);
  scopeprof::reset();
}

TEST_CASE("gpu q: a background pass resolves each stream's finished scopes, up to the first still running") {
  SCOPEPROF_GPU_OR_SKIP();
  warm_up();
  scopeprof::reset();
  scopeprof::detail::registry& reg = scopeprof::detail::the_registry();
  scopeprof::detail::device_context& ctx = *scopeprof::detail::the_devices().devices[0];
  const auto timed = [&] {
    std::lock_guard<std::mutex> serial(reg.collect_mu);
    return ctx.scopes_timed;
  };
  const std::uint64_t timed_before = timed();
  cudaStream_t side = nullptr;
  CUDA_CHECK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
  // Default stream: 10 finished scopes, one 1 s kernel, 10 queued behind it. Side stream: 5 finished.
  for (int i = 0; i < 10; ++i) {
    PROF_SCOPE("done_before");
    CUDA_CHECK(spin(5));
  }
  CUDA_CHECK(cudaStreamSynchronize(nullptr));
  {
    PROF_SCOPE("blocker");
    CUDA_CHECK(spin(1000000));  // 1 s: still running after the launches below, even under compute-sanitizer
  }
  for (int i = 0; i < 10; ++i) {
    PROF_SCOPE("queued_after");
    CUDA_CHECK(spin(5));
  }
  for (int i = 0; i < 5; ++i) {
    PROF_SCOPE_STREAM("side_done", side);
    CUDA_CHECK(spin(5, side));
  }
  CUDA_CHECK(cudaStreamSynchronize(side));
  if (cudaStreamQuery(nullptr) != cudaErrorNotReady)
    MESSAGE("the blocker ended before the pass (a slow host): the count after the pass is not checked");
  {
    // As the drain thread does (it may have run passes of its own already: the count is the same).
    std::lock_guard<std::mutex> serial(reg.collect_mu);
    scopeprof::detail::drain_pass(reg, scopeprof::detail::the_drain(), scopeprof::detail::view_registry(reg),
                                  scopeprof::detail::pass_kind::fold, scopeprof::detail::pass_scope::background);
  }
  // Read before asking whether the blocker still runs: if it does now, it did then, and nothing behind it
  // could have been resolved since (not even by the drain thread).
  const std::uint64_t after_pass = timed() - timed_before;
  const bool still_running = cudaStreamQuery(nullptr) == cudaErrorNotReady;
  CHECK(cudaPeekAtLastError() == cudaSuccess);
  // The 10 finished default-stream scopes and the 5 side-stream ones; none of the blocker or behind it.
  if (still_running) CHECK(after_pass == 15);
  CUDA_CHECK(cudaDeviceSynchronize());
  const scopeprof::report r = scopeprof::collect();
  INFO(evidence(r));
  CHECK(timed() - timed_before == 26);
  for (const char* name : {"done_before", "blocker", "queued_after", "side_done"})
    for (const auto& in : instances_named(r, name)) {
      CHECK(status_name(in.device) == "ok");
      CHECK(in.device_span_ns() > 0);
    }
  const auto blocker = instances_named(r, "blocker");
  REQUIRE(blocker.size() == 1);
  CHECK(blocker[0].device_span_ns() >= 1000000 * us);
  // Queued behind the blocker on the same stream: each one's span starts after the blocker's ends.
  for (const auto& in : instances_named(r, "queued_after")) CHECK(in.device_begin_ns >= blocker[0].device_end_ns);
  CUDA_CHECK(cudaStreamDestroy(side));
  scopeprof::reset();
}
