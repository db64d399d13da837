// A kernel fault inside a device-timed scope. scopeprof must (1) not hang: collect() returns within its
// bounded wait, (2) not hide the fault: the program's cudaDeviceSynchronize still reports
// cudaErrorIllegalAddress, (3) say so: the report's device evidence is marked invalid and names the
// error, and (4) keep the host time of the scope. Exit 0 when all hold (or without a device), 1 otherwise.
#include <scopeprof.hpp>

#include "gpu_support.cuh"

#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>

namespace {

__global__ void write_through_invalid_pointer(int* p) { *p = 42; }

int failures = 0;

void check(bool ok, const std::string& what) {
  std::printf("%s  %s\n", ok ? "ok  " : "FAIL", what.c_str());
  if (!ok) ++failures;
}

}  // namespace

int main() {
  std::string why;
  if (!scopeprof_gpu::device_available(why)) {
    std::printf("skipped: no CUDA device (%s)\n", why.c_str());
    return 0;
  }

  // Set up device timing before the fault, as a running program would have.
  {
    PROF_SCOPE("before_fault");
    (void)scopeprof_gpu::spin(1);
  }
  if (cudaDeviceSynchronize() != cudaSuccess) {
    std::printf("FAIL  the GPU does not run a plain kernel: %s\n", cudaGetErrorString(cudaGetLastError()));
    return 1;
  }

  cudaError_t launch = cudaSuccess;
  {
    PROF_SCOPE("faulting");
    // An unmapped device address (near null): the write is an illegal address.
    write_through_invalid_pointer<<<1, 1>>>(reinterpret_cast<int*>(0x100));
    launch = cudaGetLastError();
  }
  check(launch == cudaSuccess, std::string("the faulting kernel launched (launch error: ") + cudaGetErrorName(launch) + ")");

  const auto t0 = std::chrono::steady_clock::now();
  const scopeprof::report r = scopeprof::collect();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  std::cout << "---- report ----\n";
  r.print(std::cout);
  std::cout << "----------------\n";
  std::printf("collect() took %.3f s\n", seconds);

  const cudaError_t sync = cudaDeviceSynchronize();
  check(seconds < 10.0, "collect() returned within 10 s (" + std::to_string(seconds) + " s)");
  check(sync == cudaErrorIllegalAddress,
        std::string("cudaDeviceSynchronize() reports the fault: ") + cudaGetErrorName(sync) + " (" + cudaGetErrorString(sync) + ")");
  const std::string& dev = r.sources().device;
  check(!r.sources().device_valid, "device evidence is marked not valid: " + dev);
  check(dev.find("cudaErrorIllegalAddress") != std::string::npos || dev.find("illegal memory access") != std::string::npos,
        "device evidence names the error");
  const scopeprof::flat_row* f = r.find("faulting");
  check(f != nullptr && f->calls == 1 && f->host_total_ns > 0, "the faulting scope's host time is recorded");
  if (f != nullptr)
    std::printf("      faulting: %llu call(s), host %lld ns, device calls %llu, invalid %llu\n",
                static_cast<unsigned long long>(f->calls), static_cast<long long>(f->host_total_ns),
                static_cast<unsigned long long>(f->device_calls), static_cast<unsigned long long>(f->device_invalid));

  std::printf("%s: %d check(s) failed\n", failures ? "FAILED" : "PASSED", failures);
  return failures ? 1 : 0;
}
