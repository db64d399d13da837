// scopeprof tool: the ranks of one job as their files come in, whether reports or traces: each rank once,
// one world size, one program, and in the end every rank 0..W-1.
//
//   scopeprof_cli::rank_roster roster("reports");
//   for (...) if (!roster.add({path, rank, host, pid, program, base}, world, error)) fail(error);
//   if (auto why = roster.incomplete(); !why.empty()) fail(why);
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace scopeprof_cli {

/// One input file: where it came from and which process wrote it.
struct merge_input {
  std::string file;
  std::int64_t rank = 0;
  std::string host;
  std::int64_t pid = 0;
  std::string program;
  std::int64_t base_unix_ns = 0;
};

class rank_roster {
 public:
  /// `what`: the inputs' kind in messages ("reports", "traces").
  explicit rank_roster(std::string what) : what_(std::move(what)) {}

  /// Checks one input and records it. False, with "FILE: what is wrong" in `error` and nothing recorded,
  /// when `world_size` is below 1 or differs from the first input's, the rank is outside [0, world size)
  /// or already given (the message names both files), or its program differs from an earlier input's.
  bool add(const merge_input& in, std::int64_t world_size, std::string& error);

  /// "" when ranks 0..W-1 are all there; else what is missing (up to 10 ranks named) or "no ... to merge".
  std::string incomplete() const;

  std::int64_t world_size() const noexcept { return world_size_; }
  /// The first program named, "" when no input named one.
  std::string program() const;
  /// The inputs, ascending by rank (the roster is spent afterwards).
  std::vector<merge_input> take_by_rank();

 private:
  std::string missing_ranks() const;

  std::string what_;
  std::vector<merge_input> inputs_;
  std::unordered_map<std::int64_t, std::size_t> input_of_rank_;  // rank -> index into inputs_
  std::int64_t world_size_ = 0;
  std::size_t program_input_ = static_cast<std::size_t>(-1);  // the first input that named a program
};

}  // namespace scopeprof_cli
