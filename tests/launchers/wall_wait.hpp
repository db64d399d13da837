// The fixed wall time of a synthetic rank's work (rank_worker.cpp, tests/torch_dist/allreduce_worker.cpp).
#pragma once

#include <chrono>
#include <thread>

namespace sptest {

/// Takes `us` microseconds of wall time: sleeps to 300 us before the deadline (a sleep may overshoot by
/// about that much), then spins to it, so the scope's time is the target plus rare scheduling delays.
/// Sleeping keeps ranks on few cores from slowing each other.
inline void wait_us(double us) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::nanoseconds(static_cast<long long>(us * 1000));
  const auto wake = end - std::chrono::microseconds(300);
  if (std::chrono::steady_clock::now() < wake) std::this_thread::sleep_until(wake);
  while (std::chrono::steady_clock::now() < end) {
  }
}

}  // namespace sptest
