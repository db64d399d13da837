// scopeprof long-run device benchmark: millions of device-timed scopes, one around each small kernel on one
// stream, with SCOPEPROF_TRACE=off, as a long training or inference job runs them. The drain resolves the
// event pairs in the background (query, never wait), folds each span into the tables and recycles the
// events, so memory stays flat and every scope keeps its device span. Baselines measured in the same run,
// same loop, same kernel: the kernel alone, and the kernel between two raw cudaEventRecord calls on a ring
// of pre-created events (what a hand-written timer costs, and it keeps no results). The three loops run in
// alternating rounds (20 unless --rounds says otherwise; one when a round would hold under 10,000 scopes),
// so drift over the run hits them alike.
//
//   ./build/bench/scopeprof_bench_device_long [--scopes N] [--rounds R] [--each-round]   (default 2,000,000 and 20)
//
// Prints ns per iteration of each loop, the scope's cost over the kernel alone next to the raw pair's, the
// same ratio per round (median, lowest, highest, and the first and last rounds: whether it moves with the
// run's length or with the block's), the process RSS over the loops, and what the tables counted; then each
// goal with met / NOT MET. --each-round adds a line per round: each loop's ns per iteration, the ratio, and
// the drain's passes and time per scope in that round (whether a costly round is one where the drain worked
// more, or one where the GPU or the host ran slower for all three loops).
#include <scopeprof.hpp>
#include "drain_counters.hpp"  // the drain's own counters (passes, time spent)

#include <cuda_runtime_api.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace {

__global__ void tiny_kernel(float* x) {
  if (threadIdx.x == 0) x[blockIdx.x] += 1.0f;
}

long rss_kib() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::atol(line.c_str() + 6);
  return -1;
}

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

bool check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return true;
  std::printf("CUDA error in %s: %s\n", what, cudaGetErrorString(e));
  return false;
}

const char* verdict(bool met) { return met ? "met" : "NOT MET"; }

/// The per-round ratios: median, lowest, highest, and the first and last three rounds in order.
void print_rounds(std::vector<double> ratios, long long per_block) {
  if (ratios.size() < 2) return;
  const std::vector<double> in_order = ratios;
  std::sort(ratios.begin(), ratios.end());
  std::printf("  per round (%zu rounds of %lld scopes): median %.2fx, lowest %.2fx, highest %.2fx; rounds in order:",
              ratios.size(), per_block, ratios[ratios.size() / 2], ratios.front(), ratios.back());
  for (std::size_t i = 0; i < in_order.size(); ++i) {
    if (i == 3 && in_order.size() > 6) {
      std::printf(" ...");
      i = in_order.size() - 3;
    }
    std::printf(" %.2f", in_order[i]);
  }
  std::printf("\n");
}

std::uint64_t folded_at_reset = 0;  // the drain's count of folded scopes after the warm-up's reset()

/// Until the drain has folded `scopes` scopes since the reset (at most a second; never timed).
void wait_for_drain(std::uint64_t scopes) {
  const double give_up = now_s() + 1.0;
  for (;;) {
    if (read_drain().folded - folded_at_reset >= scopes) return;
    if (now_s() > give_up) return;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

}  // namespace

int main(int argc, char** argv) {
  long long n = 2'000'000, rounds_asked = 20;
  bool each_round = false;
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--each-round") == 0) each_round = true;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--scopes") == 0) n = std::atoll(argv[i + 1]);
    if (std::strcmp(argv[i], "--rounds") == 0) rounds_asked = std::atoll(argv[i + 1]);
  }
  if (n < 1 || rounds_asked < 1) {
    std::printf("--scopes and --rounds take a whole number from 1\n");
    return 2;
  }
  float* x = nullptr;
  if (!check(cudaMalloc(&x, 4096), "cudaMalloc")) return 1;
  constexpr int ring = 4096;
  std::vector<cudaEvent_t> begin(ring), end(ring);
  for (int i = 0; i < ring; ++i)
    if (!check(cudaEventCreate(&begin[i]), "cudaEventCreate") || !check(cudaEventCreate(&end[i]), "cudaEventCreate"))
      return 1;
  scopeprof::set_trace_policy("off");
  // Warm up: the kernel, the events, the library's one-time set-up and its drain thread.
  for (int i = 0; i < 20000; ++i) {
    PROF_SCOPE("long kernel");
    tiny_kernel<<<1, 32>>>(x);
  }
  cudaDeviceSynchronize();
  scopeprof::reset();
  folded_at_reset = read_drain().folded;

  // The three loops take turns, in blocks of n / rounds iterations, each block timed up to its GPU work's
  // end: drift of the host or the GPU over the run hits all three alike. After a scoped block, the drain
  // is let fold what it resolved before the next block starts (untimed), so its work lands in the block
  // that caused it, not in a baseline's.
  const long long rounds = n >= 10'000 * rounds_asked ? rounds_asked : 1;  // a round holds 10,000 scopes or more
  const long long per_block = n / rounds;
  n = per_block * rounds;
  double kernel_s = 0, raw_s = 0, scope_s = 0;
  std::vector<double> round_ratio;  // per round: the scope's cost over the kernel / the raw pair's
  const long rss_before = rss_kib();
  long rss_peak = rss_before;
  long long done = 0;
  for (long long round = 0; round < rounds; ++round) {
    double round_s[3] = {0, 0, 0};
    const drain_counters drain_before = read_drain();
    for (int turn = 0; turn < 3; ++turn) {
      const int variant = static_cast<int>((turn + round) % 3);  // who goes first rotates
      const double t0 = now_s();
      if (variant == 0) {
        for (long long i = 0; i < per_block; ++i) tiny_kernel<<<1, 32>>>(x);
      } else if (variant == 1) {
        for (long long i = 0; i < per_block; ++i) {
          const int k = static_cast<int>(i % ring);
          cudaEventRecord(begin[k]);
          tiny_kernel<<<1, 32>>>(x);
          cudaEventRecord(end[k]);
        }
      } else {
        for (long long i = 0; i < per_block; ++i) {
          PROF_SCOPE("long kernel");
          tiny_kernel<<<1, 32>>>(x);
          if ((i & 0xFFFF) == 0) {
            const long rss = rss_kib();
            if (rss > rss_peak) rss_peak = rss;
          }
        }
      }
      cudaDeviceSynchronize();
      round_s[variant] = now_s() - t0;
      (variant == 0 ? kernel_s : variant == 1 ? raw_s : scope_s) += round_s[variant];
      if (variant == 2) {
        done += per_block;
        wait_for_drain(static_cast<std::uint64_t>(done));
      }
    }
    const double raw_round = round_s[1] - round_s[0];
    round_ratio.push_back(raw_round > 0 ? (round_s[2] - round_s[0]) / raw_round : 0);
    if (each_round) {
      const drain_counters drain_after = read_drain();
      const auto folded = static_cast<double>(drain_after.folded - drain_before.folded);
      const double per = 1e9 / static_cast<double>(per_block);
      std::printf("  round %lld: ns per iteration: kernel %.1f, raw pair %.1f, PROF_SCOPE %.1f: %.2fx; drain %llu passes, "
                  "%.0f ns per scope\n", round, round_s[0] * per, round_s[1] * per, round_s[2] * per, round_ratio.back(),
                  static_cast<unsigned long long>(drain_after.passes - drain_before.passes),
                  folded > 0 ? static_cast<double>(drain_after.pass_ns - drain_before.pass_ns) / folded : 0.0);
    }
  }
  const double kernel_ns = kernel_s * 1e9 / static_cast<double>(n);
  const double raw_ns = raw_s * 1e9 / static_cast<double>(n);
  const double scope_ns = scope_s * 1e9 / static_cast<double>(n);
  const long rss_after = rss_kib();
  if (rss_after > rss_peak) rss_peak = rss_after;
  double t0 = now_s();
  const scopeprof::report r = scopeprof::collect();
  const double collect_ms = (now_s() - t0) * 1e3;
  if (!check(cudaGetLastError(), "the loops")) return 1;

  const drain_counters drain = read_drain();
  std::uint64_t calls = 0, device_calls = 0;
  for (const auto& f : r.flat())
    if (f.name == "long kernel") {
      calls = f.calls;
      device_calls = f.device_calls;
    }
  const double scope_cost = scope_ns - kernel_ns, raw_cost = raw_ns - kernel_ns;
  const double ratio = raw_cost > 0 ? scope_cost / raw_cost : 0;
  const double growth_mib = static_cast<double>(rss_peak - rss_before) / 1024.0;
  std::printf("%lld device-timed scopes, one around each 1-block kernel on the default stream, SCOPEPROF_TRACE=off, "
              "%lld alternating rounds\n", n, rounds);
  std::printf("  ns per iteration: kernel alone %.1f, raw event pair + kernel %.1f, PROF_SCOPE + kernel %.1f\n", kernel_ns,
              raw_ns, scope_ns);
  std::printf("  over the kernel alone: raw event pair %.1f ns, PROF_SCOPE %.1f ns: %.2fx\n", raw_cost, scope_cost, ratio);
  print_rounds(round_ratio, per_block);
  std::printf("  RSS %ld -> %ld KiB over the loops (peak +%.1f MiB); collect() %.1f ms\n", rss_before, rss_after,
              growth_mib, collect_ms);
  std::printf("  tables: %llu calls, %llu with a device span; %s\n", static_cast<unsigned long long>(calls),
              static_cast<unsigned long long>(device_calls), r.sources().device.c_str());
  std::printf("  drain: %llu background passes, %.0f ns of drain time per scope folded, longest pass %.1f ms\n",
              static_cast<unsigned long long>(drain.passes),
              drain.folded ? static_cast<double>(drain.pass_ns) / static_cast<double>(drain.folded) : 0.0,
              static_cast<double>(drain.pass_ns_max) / 1e6);
  std::printf("  goal: per scope at most 1.1x a raw event pair (over the kernel)    %s\n", verdict(ratio <= 1.1));
  std::printf("  goal: RSS grows by at most 64 MiB                                %s\n", verdict(growth_mib <= 64));
  std::printf("  goal: the tables count every scope, each with its device span    %s\n",
              verdict(calls == static_cast<std::uint64_t>(n) && device_calls == calls));
  for (int i = 0; i < ring; ++i) {
    cudaEventDestroy(begin[i]);
    cudaEventDestroy(end[i]);
  }
  cudaFree(x);
  return 0;
}
