// scopeprof: what declared work turns into: achieved bandwidth, FLOP rate and arithmetic intensity of a
// row, over the device spans of its instances with work, or over host time when none of them has one and
// some were not device-timed at all (and then labelled so). Instances whose device time could not be
// measured (captured, CUDA error) never give a rate. Declared bytes and FLOPs are the program's claim; every figure derived here says "declared".
// A rate is never made from a zero or missing time, nor from a quantity that was not declared: it is n/a,
// with the reason.
#pragma once

#include <scopeprof/config.hpp>
#include <scopeprof/report_types.hpp>

#include <cmath>
#include <cstdint>
#include <limits>

SCOPEPROF_NAMESPACE_BEGIN

/// @brief The time a row's rates divide by: the device spans of its instances with declared work, or,
/// when none of them has a span, the host totals of those that were not device-timed.
enum class work_basis : std::uint8_t { none = 0, device = 1, host = 2 };

/// @brief Achieved rates of a row's declared work. NaN marks a rate that does not exist (see why_not and
/// the quantities: no bytes declared means no bandwidth, no FLOPs no FLOP rate, either no intensity).
struct work_rate {
  work_basis basis = work_basis::none;
  std::uint64_t calls = 0;   ///< the instances behind the rates (those with a span, for device)
  double bytes = 0;          ///< their declared bytes
  double flops = 0;          ///< their declared FLOPs
  double seconds = 0;        ///< their summed time on the basis
  double bytes_per_s = std::numeric_limits<double>::quiet_NaN();
  double flops_per_s = std::numeric_limits<double>::quiet_NaN();
  double intensity = std::numeric_limits<double>::quiet_NaN();  ///< FLOP per byte (declared)
  const char* why_not = "";  ///< when basis is none: why there is no rate at all
};

/// @brief The rates of `w`. Device spans when any instance with work has one (those instances only, so a
/// sampled-out or captured instance never dilutes them); else the host time of the instances that were not
/// device-timed; else none.
inline work_rate rate_of(const declared_work& w) noexcept {
  work_rate r;
  if (!w.any()) {
    r.why_not = "no work declared";
    return r;
  }
  double ns = 0;
  if (w.device_calls != 0) {
    r.basis = work_basis::device;
    r.calls = w.device_calls;
    r.bytes = w.device_bytes;
    r.flops = w.device_flops;
    ns = static_cast<double>(w.device_ns);
  } else if (w.host_calls != 0) {
    r.basis = work_basis::host;
    r.calls = w.host_calls;
    r.bytes = w.host_bytes;
    r.flops = w.host_flops;
    ns = static_cast<double>(w.host_ns);
  } else {
    r.why_not = "device time not measured (captured or CUDA error)";
    return r;
  }
  if (!(ns > 0)) {
    r.why_not = r.basis == work_basis::device ? "zero device span" : "zero host time";
    r.basis = work_basis::none;
    return r;
  }
  r.seconds = ns * 1e-9;
  if (r.bytes > 0) r.bytes_per_s = r.bytes * 1e9 / ns;
  if (r.flops > 0) r.flops_per_s = r.flops * 1e9 / ns;
  if (r.bytes > 0 && r.flops > 0) r.intensity = r.flops / r.bytes;
  return r;
}

/// @brief "device", "host" or "n/a": what the rates of a row divide by.
inline const char* work_basis_text(work_basis b) noexcept {
  switch (b) {
    case work_basis::device: return "device";
    case work_basis::host: return "host";
    default: return "n/a";
  }
}

SCOPEPROF_NAMESPACE_END
