// Test helpers of the scopeprof tool: synthetic reports of a rank, saved JSON, and the executable run
// with its exit status and output.
#pragma once

#include "raw_builders.hpp"
#include "temp_files.hpp"

#include <sys/wait.h>

#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

namespace cli_test {

/// A report of rank `rank` of `world`: `steps` steps ("step" > "forward" > "matmul", "step" > "backward"),
/// each scope's host time drawn around `base_ns` times its factor (backward times `backward_factor`), and
/// "forward" device-timed. Deterministic in `seed`.
inline scopeprof::report rank_report(std::int64_t rank, std::int64_t world, int steps, double backward_factor = 1.0,
                                     std::uint32_t seed = 1, std::int64_t base_ns = 100'000,
                                     const std::string& program = "train") {
  std::mt19937 gen(seed);
  std::normal_distribution<double> noise(1.0, 0.03);
  auto draw = [&](double mean) { return static_cast<std::int64_t>(mean * noise(gen)); };
  std::vector<sptest::raw_instance> records;  // post-order: children before their parent
  std::int64_t t = 1000;
  for (int s = 0; s < steps; ++s) {
    const std::int64_t step_begin = t;
    const std::int64_t fwd_begin = t + 10;
    const std::int64_t mm_begin = fwd_begin + 10;
    const std::int64_t mm_end = mm_begin + draw(2.0 * static_cast<double>(base_ns));
    const std::int64_t fwd_end = mm_end + draw(0.5 * static_cast<double>(base_ns));
    records.push_back(sptest::host_record(2, 2, mm_begin, mm_end));
    records.push_back(sptest::device_timed(sptest::host_record(1, 1, fwd_begin, fwd_end), 0, 7, fwd_begin + 50,
                                           fwd_begin + 50 + draw(1.5 * static_cast<double>(base_ns))));
    const std::int64_t bwd_begin = fwd_end + 10;
    const std::int64_t bwd_end = bwd_begin + draw(3.0 * backward_factor * static_cast<double>(base_ns));
    records.push_back(sptest::host_record(3, 1, bwd_begin, bwd_end));
    t = bwd_end + 10;
    records.push_back(sptest::host_record(0, 0, step_begin, t));
    t += 100;
  }
  auto snap = sptest::one_thread_snapshot("train.cpp", {"step", "forward", "matmul", "backward"}, std::move(records));
  snap.process.rank = rank;
  snap.process.world_size = world;
  snap.process.local_rank = rank % 2;
  snap.process.rank_source = "RANK";
  snap.process.host = "node" + std::to_string(rank / 2);
  snap.process.program = program;
  snap.process.pid = 1000 + rank;
  snap.process.base_unix_ns = 1'796'000'000'000'000'000 + rank * 1000;
  return scopeprof::detail::build_report(std::move(snap));
}

/// What the executable did: its exit status (-1 when it did not exit normally) and its streams.
struct run_result {
  int status = -1;
  std::string out;
  std::string err;
};

/// Runs `scopeprof ARGS` (a shell fragment) with stdout and stderr into files of `dir`.
inline run_result run_tool(const sptest::temp_dir& dir, const std::string& args, const std::string& env = "") {
  const std::string out = dir / "tool.out";
  const std::string err = dir / "tool.err";
  const std::string cmd = env + (env.empty() ? "" : " ") + "'" SCOPEPROF_CLI_EXE "' " + args + " >'" + out + "' 2>'" + err + "'";
  const int raw = std::system(cmd.c_str());
  run_result r;
  if (raw != -1 && WIFEXITED(raw)) r.status = WEXITSTATUS(raw);
  r.out = sptest::read_file_bytes(out);
  r.err = sptest::read_file_bytes(err);
  return r;
}

}  // namespace cli_test
