// scopeprof: what declared work turns into: achieved bandwidth, FLOP rate and arithmetic intensity of a
// row, over the device spans of its instances with work, or over host time when none of them has one and
// some were not device-timed at all (and then labelled so). Instances whose device time could not be
// measured (captured, CUDA error) never give a rate. Declared bytes and FLOPs are the program's claim; every figure derived here says "declared".
// A rate is never made from a zero or missing time, nor from a quantity that was not declared: it is n/a,
// with the reason. Next to a device's peaks (device_peak.hpp) the rates become percentages of the spec and
// of the measured peak, and the roofline's ridge point says which bound applies.
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

/// @brief A row's rates next to its device's peaks: percent of the spec and of the measured peak (NaN where
/// either side is missing), which roofline bound applies, and whether its working set fits in L2.
struct work_vs_peak {
  bool valid = false;        ///< device rates on one device whose peaks are known
  double pct_bw_spec = std::numeric_limits<double>::quiet_NaN();
  double pct_bw_measured = std::numeric_limits<double>::quiet_NaN();
  double pct_flops_spec = std::numeric_limits<double>::quiet_NaN();
  double pct_flops_measured = std::numeric_limits<double>::quiet_NaN();
  /// "memory" or "compute": the declared intensity against the ridge point (peak FLOP/s over peak bytes/s,
  /// measured where both are measured, else spec); a block that declared only bytes is memory-bound, one
  /// that declared only FLOPs compute-bound; "n/a" when no ridge is known.
  const char* bound = "n/a";
  double ridge = std::numeric_limits<double>::quiet_NaN();  ///< FLOP per byte where the bounds meet
  bool fits_l2 = false;      ///< declared bytes per call within the L2 cache: bandwidth may exceed DRAM's
};

/// @brief Where the rates `r` of `w` stand against `peak` (the peaks of w.device; nullptr: unknown).
inline work_vs_peak against_peak(const work_rate& r, const declared_work& w, const device_peak* peak) noexcept {
  work_vs_peak out;
  if (r.basis != work_basis::device || peak == nullptr || w.device < 0 || peak->device != w.device) return out;
  out.valid = true;
  const auto pct = [](double v, double p) {
    return std::isfinite(v) && std::isfinite(p) && p > 0 ? 100.0 * v / p : std::numeric_limits<double>::quiet_NaN();
  };
  out.pct_bw_spec = pct(r.bytes_per_s, peak->spec_bytes_per_s);
  out.pct_bw_measured = pct(r.bytes_per_s, peak->measured_bytes_per_s);
  out.pct_flops_spec = pct(r.flops_per_s, peak->spec_flops_per_s);
  out.pct_flops_measured = pct(r.flops_per_s, peak->measured_flops_per_s);
  const bool measured = std::isfinite(peak->measured_bytes_per_s) && std::isfinite(peak->measured_flops_per_s);
  const double bw = measured ? peak->measured_bytes_per_s : peak->spec_bytes_per_s;
  const double fl = measured ? peak->measured_flops_per_s : peak->spec_flops_per_s;
  if (std::isfinite(bw) && std::isfinite(fl) && bw > 0) out.ridge = fl / bw;
  if (r.bytes > 0 && !(r.flops > 0)) out.bound = "memory";
  else if (r.flops > 0 && !(r.bytes > 0)) out.bound = "compute";
  else if (std::isfinite(out.ridge) && std::isfinite(r.intensity)) out.bound = r.intensity < out.ridge ? "memory" : "compute";
  out.fits_l2 = peak->l2_bytes > 0 && r.calls > 0 && r.bytes / static_cast<double>(r.calls) <= static_cast<double>(peak->l2_bytes);
  return out;
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
