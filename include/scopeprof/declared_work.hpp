// scopeprof: the work a scope declared (PROF_SCOPE_WORK, add_work), summed: a plain value type, shared by
// the fold (detail/call_path_fold.hpp) and the report's rows (report_types.hpp).
#pragma once

#include <scopeprof/config.hpp>

#include <cstdint>

SCOPEPROF_NAMESPACE_BEGIN

/// @brief How an instance's time stands for its declared work: a valid device span; no device timing at all
/// (host-only scope, no GPU, sampled out: its host time is the only time there is); or a device time that
/// exists but could not be measured (inside a graph capture, a CUDA error), which gives no rate at all.
enum class work_timing : std::uint8_t { host = 0, device = 1, unmeasured = 2 };

/// @brief Work the program declared for its scopes (PROF_SCOPE_WORK, scopeprof::add_work): bytes moved and
/// floating-point operations as the program claims them, summed over the recorded instances that declared
/// any, and split by the time that stands for them (work_timing). Every figure derived from it
/// (work_rate.hpp) is labelled "declared".
struct declared_work {
  std::uint64_t calls = 0;         ///< recorded instances that declared work
  double bytes = 0;                ///< their declared bytes, summed
  double flops = 0;                ///< their declared floating-point operations, summed
  std::uint64_t device_calls = 0;  ///< of them, the instances with a valid device span
  double device_bytes = 0;         ///< bytes declared by those
  double device_flops = 0;         ///< FLOPs declared by those
  std::int64_t device_ns = 0;      ///< their device spans, summed
  std::int32_t device = -1;        ///< the device of those spans; -2 when they ran on several
  std::uint64_t host_calls = 0;    ///< the instances not device-timed at all
  double host_bytes = 0;           ///< bytes declared by those
  double host_flops = 0;           ///< FLOPs declared by those
  std::int64_t host_ns = 0;        ///< their host totals, summed (host clock ticks inside the fold)
  std::uint64_t unmeasured = 0;    ///< instances whose device time is n/a (captured, CUDA error): no rate

  bool any() const noexcept { return calls != 0; }
  /// One more instance with declared work: `host` its host total, `span_ns` its device span (device timing).
  void add(double b, double f, work_timing timing, std::int64_t host, std::int64_t span_ns, std::int32_t on_device) noexcept {
    ++calls;
    bytes += b;
    flops += f;
    switch (timing) {
      case work_timing::device:
        ++device_calls;
        device_bytes += b;
        device_flops += f;
        device_ns += span_ns;
        device = device_calls == 1 || device == on_device ? on_device : -2;
        break;
      case work_timing::host:
        ++host_calls;
        host_bytes += b;
        host_flops += f;
        host_ns += host;
        break;
      default: ++unmeasured; break;
    }
  }
  void merge(const declared_work& o) noexcept {
    if (o.calls == 0) return;
    calls += o.calls;
    bytes += o.bytes;
    flops += o.flops;
    if (o.device_calls != 0) device = device_calls == 0 || device == o.device ? o.device : -2;
    device_calls += o.device_calls;
    device_bytes += o.device_bytes;
    device_flops += o.device_flops;
    device_ns += o.device_ns;
    host_calls += o.host_calls;
    host_bytes += o.host_bytes;
    host_flops += o.host_flops;
    host_ns += o.host_ns;
    unmeasured += o.unmeasured;
  }
};

SCOPEPROF_NAMESPACE_END
