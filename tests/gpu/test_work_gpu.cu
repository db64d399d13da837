// Declared work on the GPU: spans joined to their declarations, rates over the device span (never host
// time when a span exists), the device's spec peaks in every report, calibrate_device()'s measured peaks,
// and a captured scope's work giving no rate.
#include <scopeprof.hpp>

#include <doctest/doctest.h>

#include "gpu_support.cuh"
#include "gpu_test_helpers.cuh"

#include <cmath>
#include <cstdint>
#include <string>

namespace {

__global__ void copy_kernel(const float* __restrict__ in, float* __restrict__ out, std::size_t n) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    out[i] = in[i];
}

}  // namespace

TEST_CASE("gpu work a: a copy kernel's declared bytes over its device span, against the device's peaks") {
  SCOPEPROF_GPU_OR_SKIP();
  warm_up();
  const bool calibrated = scopeprof::calibrate_device();
  CHECK(calibrated);
  const std::size_t n = std::size_t{64} << 20;  // 256 MiB per buffer: far above any L2
  float *in = nullptr, *out = nullptr;
  CUDA_CHECK(cudaMalloc(&in, n * 4));
  CUDA_CHECK(cudaMalloc(&out, n * 4));
  CUDA_CHECK(cudaMemset(in, 0, n * 4));
  CUDA_CHECK(cudaDeviceSynchronize());
  scopeprof::reset();
  const int calls = 20;
  for (int i = 0; i < calls; ++i) {
    PROF_SCOPE_WORK("gpu_copy", 8.0 * static_cast<double>(n), 0);
    copy_kernel<<<1024, 256>>>(in, out, n);
  }
  const scopeprof::report r = scopeprof::collect();
  CUDA_CHECK(cudaDeviceSynchronize());
  cudaFree(in);
  cudaFree(out);
  const scopeprof::flat_row& f = row(r, "gpu_copy");
  CHECK(f.work.calls == calls);
  CHECK(f.work.device_calls == calls);
  CHECK(f.work.device_ns == f.device_total_ns);  // the same spans the table shows
  const scopeprof::work_rate rate = scopeprof::rate_of(f.work);
  CHECK(rate.basis == scopeprof::work_basis::device);
  const scopeprof::device_peak* peak = r.peak_of(f.work.device);
  REQUIRE_MESSAGE(peak != nullptr, evidence(r));
  MESSAGE("device " << peak->device << " " << peak->name << ": spec " << peak->spec_bytes_per_s / 1e9 << " GB/s, "
                    << peak->spec_flops_per_s / 1e12 << " TFLOP/s; measured " << peak->measured_bytes_per_s / 1e9
                    << " GB/s, " << peak->measured_flops_per_s / 1e12 << " TFLOP/s (" << peak->measured_note << ")");
  CHECK(std::isfinite(peak->spec_bytes_per_s));
  CHECK(std::isfinite(peak->spec_flops_per_s));
  CHECK(std::isfinite(peak->measured_bytes_per_s));
  CHECK(std::isfinite(peak->measured_flops_per_s));
  const scopeprof::work_vs_peak v = scopeprof::against_peak(rate, f.work, peak);
  REQUIRE(v.valid);
  MESSAGE("copy kernel " << rate.bytes_per_s / 1e9 << " GB/s = " << v.pct_bw_spec << "% of spec, " << v.pct_bw_measured
                         << "% of measured");
  CHECK(std::string(v.bound) == "memory");
  CHECK(!v.fits_l2);
  // A kernel that copies cannot beat the spec DRAM bandwidth; the measured peaks sit below spec and not far.
  const bool copy_plausible = v.pct_bw_spec > 20 && v.pct_bw_spec < 100;
  TIMING_CHECK(copy_plausible, "copy kernel at " << v.pct_bw_spec << "% of spec bandwidth");
  const double bw_share = peak->measured_bytes_per_s / peak->spec_bytes_per_s;
  const double fl_share = peak->measured_flops_per_s / peak->spec_flops_per_s;
  const bool bw_plausible = bw_share > 0.5 && bw_share < 1.02, fl_plausible = fl_share > 0.5 && fl_share < 1.02;
  TIMING_CHECK(bw_plausible, "measured copy " << peak->measured_bytes_per_s / 1e9 << " GB/s against spec "
                                              << peak->spec_bytes_per_s / 1e9);
  TIMING_CHECK(fl_plausible, "measured FMA " << peak->measured_flops_per_s / 1e12 << " TFLOP/s against spec "
                                             << peak->spec_flops_per_s / 1e12);
  CHECK(r.to_string().find("%BW spec") != std::string::npos);
}

TEST_CASE("gpu work b: work declared inside a graph capture gives no rate until a replay times it") {
  SCOPEPROF_GPU_OR_SKIP();
  warm_up();
  cudaStream_t s = nullptr;
  CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaGraph_t graph = nullptr;
  CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  {
    PROF_SCOPE_STREAM("captured_work", s);
    scopeprof::add_work(1e6, 0);
    CUDA_CHECK(spin(20, s));
  }
  CUDA_CHECK(cudaStreamEndCapture(s, &graph));
  const scopeprof::report r = scopeprof::collect();  // never replayed: n/a (captured)
  const scopeprof::flat_row& f = row(r, "captured_work");
  CHECK(f.work.calls == 1);
  CHECK(f.work.unmeasured == 1);
  CHECK(scopeprof::rate_of(f.work).basis == scopeprof::work_basis::none);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(s);
  scopeprof::reset();
}
