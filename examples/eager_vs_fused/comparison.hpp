// What both eager_vs_fused programs share: their command line, the workload sizes, and the comparison they
// print from scopeprof's report (device time per block, Amdahl's law, bandwidth against a copy and the
// device's peak from the work each scope declares, host time beside device time, the instrumentation cost,
// the seed's T4 figures as a labelled reference).
// Plain C++17: the CUDA variant (nvcc) and the LibTorch variant (a C++ compiler) include it alike.
#pragma once

#include <scopeprof.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

namespace eager_vs_fused {

struct options {
  std::string preset = "auto";
  long m = 0, k = 0, n = 0;
  int iters = 50;
  int warmup = 5;
  int profile_iters = 10;                 // LibTorch variant: blocks per torch profiler session
  std::string trace;                      // scopeprof's Chrome trace ("" = none)
  std::string torch_trace_dir = ".";      // LibTorch variant: where eager_trace.json / fused_trace.json go
  std::string only;                       // "eager" or "fused": that variant alone, generic scope names (CUDA variant)
  bool calibrate = true;                  // measure the device's peaks (scopeprof::calibrate_device)
};

/// The command line of `program`; `torch_flags` adds --profile-iters and --torch-trace-dir, and leaves out
/// --only. A bad flag prints the usage and exits 2.
inline options parse(int argc, char** argv, const char* program, bool torch_flags) {
  options o;
  o.trace = std::string(program) + ".trace.json";
  const auto usage = [&](const std::string& why) {
    std::fprintf(stderr,
                 "%s: %s\n"
                 "usage: %s [--preset auto|t4|large|tiny] [--m M --k K --n N] [--iters N] [--warmup N]\n"
                 "       %*s [--trace PATH | --no-trace] [--no-calibrate]%s\n",
                 program, why.c_str(), program, static_cast<int>(std::string(program).size()), "",
                 torch_flags ? " [--profile-iters N] [--torch-trace-dir DIR]" : " [--only eager|fused]");
    std::exit(2);
  };
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage("missing value after " + a);
      return argv[++i];
    };
    const auto number = [&](long lo) {
      const std::string v = value();
      char* end = nullptr;
      const long x = std::strtol(v.c_str(), &end, 10);
      if (end == v.c_str() || *end != '\0' || x < lo || x > 1000000000L) usage("bad value for " + a + ": " + v);
      return x;
    };
    if (a == "--preset") o.preset = value();
    else if (a == "--m") o.m = number(1);
    else if (a == "--k") o.k = number(1);
    else if (a == "--n") o.n = number(1);
    else if (a == "--iters") o.iters = static_cast<int>(number(1));
    else if (a == "--warmup") o.warmup = static_cast<int>(number(0));
    else if (a == "--trace") o.trace = value();
    else if (a == "--no-trace") o.trace.clear();
    else if (a == "--no-calibrate") o.calibrate = false;
    else if (torch_flags && a == "--profile-iters") o.profile_iters = static_cast<int>(number(1));
    else if (torch_flags && a == "--torch-trace-dir") o.torch_trace_dir = value();
    else if (!torch_flags && a == "--only") o.only = value();
    else if (a == "--help" || a == "-h") usage("help");
    else usage("unknown argument " + a);
  }
  if (o.preset != "auto" && o.preset != "t4" && o.preset != "large" && o.preset != "tiny") usage("unknown preset " + o.preset);
  if (o.torch_trace_dir.empty()) usage("empty value for --torch-trace-dir");
  if (!o.only.empty() && o.only != "eager" && o.only != "fused") usage("--only takes eager or fused, not " + o.only);
  return o;
}

/// The Linear's shape: X[m x k] * W[n x k]^T -> Y[m x n], float32.
struct workload {
  std::string preset;
  long m = 0, k = 0, n = 0;
  std::size_t elems = 0;    // elements of Y (and of every tail tensor)
  double tensor_bytes = 0;  // bytes of one tail tensor
};

/// t4: the seed's workload (M=8192, K=2048, N=1024); large: every tensor at least 8x the L2 cache, so the
/// eager intermediates must go through DRAM; tiny: a short run (sanitizers, smoke tests); auto: t4 where
/// that already exceeds 8x L2, else large. --m/--k/--n override.
inline workload choose(const options& opt, double l2_bytes) {
  workload w;
  w.preset = opt.preset;
  w.m = 8192, w.k = 2048, w.n = 1024;
  if (w.preset == "auto") w.preset = (static_cast<double>(w.m) * w.n * 4 >= 8 * l2_bytes) ? "t4" : "large";
  if (w.preset == "large") {
    const double need = 8 * l2_bytes / (static_cast<double>(w.n) * 4);
    while (w.m < need) w.m *= 2;
  } else if (w.preset == "tiny") {
    w.m = 1024, w.k = 256, w.n = 256;
  }
  if (opt.m) w.m = opt.m;
  if (opt.k) w.k = opt.k;
  if (opt.n) w.n = opt.n;
  w.elems = static_cast<std::size_t>(w.m) * static_cast<std::size_t>(w.n);
  w.tensor_bytes = static_cast<double>(w.elems) * 4;
  return w;
}

/// The work each part of a block declares (PROF_SCOPE_WORK): bytes as the least traffic the part must move,
/// FLOPs as counted. The Linear reads X and W and writes Y once (a bias adds n floats and m*n additions);
/// the eager tail moves 11 tensors (four unary kernels read and write one each, the residual add reads two
/// and writes one), the fused tail 3; both tails do 5 operations per element (relu, *2, +1, sqrt, +r).
struct block_work {
  double linear_bytes = 0, linear_flops = 0;
  double eager_tail_bytes = 0, fused_tail_bytes = 0, tail_flops = 0;
};

inline block_work work_of(const workload& w, bool bias) {
  const double m = static_cast<double>(w.m), k = static_cast<double>(w.k), n = static_cast<double>(w.n);
  block_work b;
  b.linear_bytes = 4 * (m * k + n * k + m * n + (bias ? n : 0));
  b.linear_flops = 2 * m * n * k + (bias ? m * n : 0);
  b.eager_tail_bytes = 11 * w.tensor_bytes;
  b.fused_tail_bytes = 3 * w.tensor_bytes;
  b.tail_flops = 5 * static_cast<double>(w.elems);
  return b;
}

/// The achieved rates of the scopes named `name` (their declared work over their device spans), and where
/// they stand against the device's peaks.
inline scopeprof::work_rate rate_of_scope(const scopeprof::report& r, const char* name) {
  const scopeprof::flat_row* f = r.find(name);
  return f != nullptr ? scopeprof::rate_of(f->work) : scopeprof::work_rate{};
}
inline scopeprof::work_vs_peak peak_of_scope(const scopeprof::report& r, const char* name) {
  const scopeprof::flat_row* f = r.find(name);
  if (f == nullptr) return {};
  return scopeprof::against_peak(scopeprof::rate_of(f->work), f->work, r.peak_of(f->work.device));
}

/// " = 41.2% of spec (4915 GB/s), 45.0% of measured (4500 GB/s)": a rate's share of the device's peaks.
inline std::string of_peak(double pct_spec, double pct_measured, double spec, double measured, double scale,
                           const char* unit) {
  char buf[160];
  std::string s;
  if (std::isfinite(pct_spec)) {
    std::snprintf(buf, sizeof buf, "%5.1f%% of spec (%.0f %s)", pct_spec, spec / scale, unit);
    s += buf;
  }
  if (std::isfinite(pct_measured)) {
    std::snprintf(buf, sizeof buf, "%s%5.1f%% of measured (%.0f %s)", s.empty() ? "" : ", ", pct_measured,
                  measured / scale, unit);
    s += buf;
  }
  return s.empty() ? std::string("(no device peak known)") : s;
}

inline double median(std::vector<double> v) {
  if (v.empty()) return std::nan("");
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}
inline double device_median_ms(const scopeprof::report& r, const char* name) {
  const scopeprof::flat_row* f = r.find(name);
  return f && f->device_calls ? f->device.median / 1e6 : std::nan("");
}
inline double host_median_ms(const scopeprof::report& r, const char* name) {
  const scopeprof::flat_row* f = r.find(name);
  return f ? f->host.median / 1e6 : std::nan("");
}

/// What differs between the two programs' printouts.
struct wording {
  const char* linear_row;  // the Linear's row label in the device-time table
  const char* linear;      // the Linear in running text ("the GEMM", "the Linear")
  const char* host_extra;  // one more sentence for the host-time paragraph ("" for none)
};

/// The device medians of the timed run, and the figures derived from them.
struct figures {
  double eager_block, fused_block, eager_linear, fused_linear, eager_tail, fused_tail, copy;
  double tail_ratio() const { return eager_tail / fused_tail; }
  double block_ratio() const { return eager_block / fused_block; }
};

inline figures device_figures(const scopeprof::report& rep) {
  return {device_median_ms(rep, "eager block"), device_median_ms(rep, "fused block"),
          device_median_ms(rep, "eager linear"), device_median_ms(rep, "fused linear"),
          device_median_ms(rep, "eager tail"),  device_median_ms(rep, "fused tail"),
          device_median_ms(rep, "d2d copy")};
}

/// The bandwidth and FLOP rates, straight from the report: each scope's declared work over its device span,
/// against a device-to-device copy and the device's spec (and, once calibrated, measured) peaks.
inline void print_rates(const scopeprof::report& rep, const workload& w, double l2_bytes, double copy_bytes,
                        const figures& f, const wording& say) {
  const scopeprof::work_rate copy = rate_of_scope(rep, "d2d copy"), eager = rate_of_scope(rep, "eager tail"),
                             fused = rate_of_scope(rep, "fused tail"), gemm = rate_of_scope(rep, "eager linear");
  const scopeprof::work_vs_peak copy_p = peak_of_scope(rep, "d2d copy"), eager_p = peak_of_scope(rep, "eager tail"),
                                fused_p = peak_of_scope(rep, "fused tail"), gemm_p = peak_of_scope(rep, "eager linear");
  const scopeprof::device_peak* peak = rep.peak_of(0);
  const double spec_bw = peak ? peak->spec_bytes_per_s : std::nan(""), meas_bw = peak ? peak->measured_bytes_per_s : std::nan("");
  const double spec_fl = peak ? peak->spec_flops_per_s : std::nan(""), meas_fl = peak ? peak->measured_flops_per_s : std::nan("");
  const double copy_gbs = copy.bytes_per_s / 1e9, eager_gbs = eager.bytes_per_s / 1e9, fused_gbs = fused.bytes_per_s / 1e9;
  std::printf("\nBandwidth and FLOP rate, from scopeprof's report (work each scope declares with PROF_SCOPE_WORK, over\n"
              "its device span; the copy counts read + write):\n");
  std::printf("  device-to-device copy  %8.0f GB/s   (%.0f MB) %s\n", copy_gbs, copy_bytes / 1e6,
              of_peak(copy_p.pct_bw_spec, copy_p.pct_bw_measured, spec_bw, meas_bw, 1e9, "GB/s").c_str());
  std::printf("  eager tail             %8.0f GB/s   = %5.1f%% of copy, %s\n", eager_gbs, 100 * eager_gbs / copy_gbs,
              of_peak(eager_p.pct_bw_spec, eager_p.pct_bw_measured, spec_bw, meas_bw, 1e9, "GB/s").c_str());
  std::printf("  fused tail             %8.0f GB/s   = %5.1f%% of copy, %s\n", fused_gbs, 100 * fused_gbs / copy_gbs,
              of_peak(fused_p.pct_bw_spec, fused_p.pct_bw_measured, spec_bw, meas_bw, 1e9, "GB/s").c_str());
  std::printf("  %-22s %8.2f TFLOP/s %s (FP32, %s bound)\n", say.linear, gemm.flops_per_s / 1e12,
              of_peak(gemm_p.pct_flops_spec, gemm_p.pct_flops_measured, spec_fl, meas_fl, 1e12, "TFLOP/s").c_str(),
              gemm_p.bound);
  std::printf("  tail ratio / byte ratio = %.1f%%\n", 100 * f.tail_ratio() / (11.0 / 3.0));
  if (w.tensor_bytes < l2_bytes)
    std::printf("  note: a tensor (%.1f MB) fits in this GPU's %.1f MB L2 cache, so the eager intermediates need not\n"
                "  reach DRAM: the 11:3 byte ratio need not hold and the bandwidths above may exceed DRAM's.\n"
                "  Use --preset large for tensors well above L2.%s\n",
                w.tensor_bytes / 1e6, l2_bytes / 1e6,
                f.tail_ratio() < 0.95 * (11.0 / 3.0) ? " Here the tail ratio falls short of 11:3 for that reason." : "");
}

/// Prints the comparison: scopes "eager block" / "eager linear" / "eager tail", the same for "fused", and
/// "d2d copy" (of `copy_bytes`) in `rep`, each part declaring its work (block_work); `raw_eager`/`raw_fused`
/// are the blocks timed by one raw event pair each, without scopeprof, interleaved with the instrumented
/// ones. Then scopeprof's report and trace.
inline figures print_comparison(const scopeprof::report& rep, const workload& w, double l2_bytes, double copy_bytes,
                                 const std::vector<double>& raw_eager, const std::vector<double>& raw_fused, int iters,
                                 const wording& say, const std::string& trace) {
  const figures f = device_figures(rep);
  const double et = f.eager_tail, ft = f.fused_tail, eb = f.eager_block, fb = f.fused_block;
  const double tail_ratio = f.tail_ratio(), block_ratio = f.block_ratio();
  const double byte_ratio = 11.0 / 3.0;
  const double tail_share = et / eb, linear_share = f.eager_linear / eb;
  const double amdahl = 1.0 / ((1.0 - tail_share) + tail_share / tail_ratio);
  const double raw_eb = median(raw_eager), raw_fb = median(raw_fused);

  std::printf("\nDevice time per block, medians of %d iterations (CUDA events via scopeprof):\n", iters);
  std::printf("  %-34s %10s %10s %8s\n", "", "eager", "fused", "ratio");
  std::printf("  %-34s %7.4f ms %7.4f ms %7.3fx   (bytes moved 11:3 = %.3fx)\n", "elementwise tail", et, ft, tail_ratio, byte_ratio);
  std::printf("  %-34s %7.4f ms %7.4f ms %7.3fx\n", say.linear_row, f.eager_linear, f.fused_linear, f.eager_linear / f.fused_linear);
  std::printf("  %-34s %7.4f ms %7.4f ms %7.3fx\n", "complete block", eb, fb, block_ratio);
  std::printf("\nWhy the block gains so much less than the tail (Amdahl's law):\n");
  std::printf("  %s is %.1f%% of the eager block and the tail %.1f%%; a %.3fx faster tail predicts a\n"
              "  %.4fx faster block; measured %.4fx.\n",
              say.linear, 100 * linear_share, 100 * tail_share, tail_ratio, amdahl, block_ratio);
  print_rates(rep, w, l2_bytes, copy_bytes, f, say);
  std::printf("\nHost time (what an NVTX range or a CPU timer sees) beside device time, medians:\n");
  std::printf("  %-14s host %9.4f ms   device %9.4f ms\n", "eager block", host_median_ms(rep, "eager block"), eb);
  std::printf("  %-14s host %9.4f ms   device %9.4f ms\n", "eager tail", host_median_ms(rep, "eager tail"), et);
  std::printf("  %-14s host %9.4f ms   device %9.4f ms\n", "fused tail", host_median_ms(rep, "fused tail"), ft);
  std::printf("  The host range only covers launching asynchronous work (the CPU returns before the GPU finishes),\n"
              "  so it measures launch cost and queueing, not the kernels: it is not a device time.%s\n",
              say.host_extra);
  std::printf("\nInstrumentation cost on the device: block time with scopeprof (3 scopes) vs one raw event pair,\n"
              "  no scopeprof, the two runs interleaved:\n");
  std::printf("  eager block %.4f ms vs %.4f ms (%+.2f%%); fused block %.4f ms vs %.4f ms (%+.2f%%)\n", eb, raw_eb,
              100 * (eb / raw_eb - 1), fb, raw_fb, 100 * (fb / raw_fb - 1));
  std::printf("\nReference, NOT this run: the seed's Tesla T4 (driver 580.173.02, CUDA 12.6, M=8192 K=2048 N=1024):\n"
              "  tail 1.5118 ms vs 0.4104 ms (3.68x); blocks 7.7794 ms vs 6.6554 ms (1.1689x).\n\n");

  rep.print(std::cout);
  if (!trace.empty()) {
    const scopeprof::write_result wr = rep.write_chrome_trace(trace);
    if (wr) std::printf("\nChrome trace written to %s (open it in ui.perfetto.dev)\n", trace.c_str());
    else std::fprintf(stderr, "%s\n", wr.message().c_str());
  }
  std::cout.flush();
  return f;
}

}  // namespace eager_vs_fused
