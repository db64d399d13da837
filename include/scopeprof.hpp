// scopeprof: host and device time per code block for CUDA and LibTorch programs.
//
//   #include <scopeprof.hpp>
//   void step() {
//     PROF_SCOPE("step");
//     ...
//   }
//   int main() { ...; scopeprof::collect().print(std::cout); }
//
// This umbrella header only includes the parts; README.md lists every macro and environment variable.
// What a translation unit sees: the hot path (scope.hpp, macros.hpp) and the declarations of the API
// (runtime.hpp, report.hpp). The cold code (impl/) follows only in header-only builds and in the one TU
// that defines SCOPEPROF_IMPLEMENTATION; see config.hpp.
#pragma once

#include <scopeprof/version.hpp>
#include <scopeprof/config.hpp>
#include <scopeprof/clock.hpp>
#include <scopeprof/report_types.hpp>
#include <scopeprof/work_rate.hpp>
#include <scopeprof/report.hpp>
#include <scopeprof/detail/recorder.hpp>
#include <scopeprof/backends/cuda_events.hpp>
#include <scopeprof/backends/cupti.hpp>
#include <scopeprof/runtime.hpp>
#include <scopeprof/scope.hpp>
#include <scopeprof/macros.hpp>

#if SCOPEPROF_DETAIL_DEFINE_COLD
#include <scopeprof/impl/implementation.hpp>
#endif
