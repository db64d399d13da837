// scopeprof: what a device can do at best, for the "% of peak" of declared work (work_rate.hpp): the
// theoretical peak from the device's attributes (labelled "spec") and, after calibrate_device() or
// SCOPEPROF_CALIBRATE=1, the peak measured on it (labelled "measured").
#pragma once

#include <scopeprof/config.hpp>

#include <cstdint>
#include <limits>
#include <string>

SCOPEPROF_NAMESPACE_BEGIN

/// @brief One CUDA device's peaks. NaN where a figure is unknown; the notes say how each was obtained.
struct device_peak {
  std::int32_t device = -1;
  std::string name;               ///< as the driver names the device
  int cc_major = 0, cc_minor = 0;  ///< compute capability
  int sm_count = 0;
  double sm_clock_hz = 0;          ///< the attribute's peak SM clock
  double memory_clock_hz = 0;      ///< the attribute's peak memory clock
  int bus_width_bits = 0;
  std::int64_t l2_bytes = 0;
  /// Spec: memory clock x 2 (double data rate) x bus width / 8.
  double spec_bytes_per_s = std::numeric_limits<double>::quiet_NaN();
  /// Spec: FP32 FMA lanes per SM (by compute capability) x 2 x SMs x SM clock (non-tensor FP32).
  double spec_flops_per_s = std::numeric_limits<double>::quiet_NaN();
  /// Measured (calibrate_device): a device-to-device copy timed with CUDA events, read + write bytes.
  double measured_bytes_per_s = std::numeric_limits<double>::quiet_NaN();
  /// Measured: an FP32 FMA kernel over every SM, timed with CUDA events.
  double measured_flops_per_s = std::numeric_limits<double>::quiet_NaN();
  std::string measured_note;      ///< how the measured figures were taken, or why there are none
};

/// @brief FP32 FMA lanes per SM for a compute capability (0 when not known to this version).
inline int fp32_lanes_per_sm(int major, int minor) noexcept {
  switch (major) {
    case 5: return 128;
    case 6: return minor == 0 ? 64 : 128;
    case 7: return 64;
    case 8: return minor == 0 ? 64 : 128;
    case 9: case 10: case 11: case 12: return 128;
    default: return 0;
  }
}

SCOPEPROF_NAMESPACE_END
