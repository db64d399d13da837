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
#pragma once

#include <scopeprof/version.hpp>
#include <scopeprof/config.hpp>
#include <scopeprof/clock.hpp>
#include <scopeprof/report.hpp>
#include <scopeprof/format/table.hpp>
#include <scopeprof/format/csv.hpp>
#include <scopeprof/format/json.hpp>
#include <scopeprof/format/chrome_trace.hpp>
#include <scopeprof/detail/recorder.hpp>
#include <scopeprof/runtime.hpp>
#include <scopeprof/scope.hpp>
#include <scopeprof/macros.hpp>
