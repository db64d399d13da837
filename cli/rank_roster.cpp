// scopeprof tool: rank_roster (rank_roster.hpp).
#include "rank_roster.hpp"

#include <algorithm>

namespace scopeprof_cli {

namespace {
constexpr std::size_t no_input = static_cast<std::size_t>(-1);
std::string quoted(const std::string& s) { return "'" + s + "'"; }
}  // namespace

bool rank_roster::add(const merge_input& in, std::int64_t world_size, std::string& error) {
  if (world_size < 1) {
    error = in.file + ": world size " + std::to_string(world_size) + " is not a number of ranks";
    return false;
  }
  if (!inputs_.empty() && world_size != world_size_) {
    error = in.file + ": world size " + std::to_string(world_size) + ", but " + inputs_.front().file +
            " has world size " + std::to_string(world_size_) + " (" + what_ + " of different jobs?)";
    return false;
  }
  if (in.rank < 0 || in.rank >= world_size) {
    error = in.file + ": rank " + std::to_string(in.rank) + " is outside 0.." + std::to_string(world_size - 1) +
            " (world size " + std::to_string(world_size) + ")";
    return false;
  }
  if (auto it = input_of_rank_.find(in.rank); it != input_of_rank_.end()) {
    error = in.file + ": rank " + std::to_string(in.rank) + " again: " + inputs_[it->second].file + " is rank " +
            std::to_string(in.rank) + " too";
    return false;
  }
  if (!in.program.empty() && program_input_ != no_input && in.program != inputs_[program_input_].program) {
    error = in.file + ": program " + quoted(in.program) + " differs from " + quoted(inputs_[program_input_].program) +
            " in " + inputs_[program_input_].file + " (" + what_ + " of different programs)";
    return false;
  }
  world_size_ = world_size;
  input_of_rank_.emplace(in.rank, inputs_.size());
  if (!in.program.empty() && program_input_ == no_input) program_input_ = inputs_.size();
  inputs_.push_back(in);
  return true;
}

std::string rank_roster::incomplete() const {
  if (inputs_.empty()) return "no " + what_ + " to merge";
  if (static_cast<std::int64_t>(input_of_rank_.size()) == world_size_) return "";
  return "world size " + std::to_string(world_size_) + " (from " + inputs_.front().file + "), but " +
         missing_ranks() + " missing among the " + std::to_string(inputs_.size()) + " " + what_ + " given";
}

std::string rank_roster::program() const {
  return program_input_ == no_input ? std::string() : inputs_[program_input_].program;
}

std::vector<merge_input> rank_roster::take_by_rank() {
  std::vector<merge_input> out = std::move(inputs_);
  std::sort(out.begin(), out.end(), [](const merge_input& a, const merge_input& b) { return a.rank < b.rank; });
  inputs_.clear();
  input_of_rank_.clear();
  return out;
}

std::string rank_roster::missing_ranks() const {
  std::vector<std::int64_t> seen;
  seen.reserve(input_of_rank_.size());
  for (const auto& kv : input_of_rank_) seen.push_back(kv.first);
  std::sort(seen.begin(), seen.end());
  // Walk the gaps between the ranks seen: no loop over 0..W-1, which a bogus world size could make huge.
  std::vector<std::int64_t> named;
  std::int64_t next = 0;
  seen.push_back(world_size_);
  for (std::int64_t r : seen) {
    for (; next < r && named.size() < 10; ++next) named.push_back(next);
    next = r + 1;
  }
  const std::int64_t missing = world_size_ - static_cast<std::int64_t>(input_of_rank_.size());
  std::string text = missing == 1 ? "rank " : "ranks ";
  for (std::size_t i = 0; i < named.size(); ++i) text += (i ? ", " : "") + std::to_string(named[i]);
  if (missing > static_cast<std::int64_t>(named.size()))
    text += " and " + std::to_string(missing - static_cast<std::int64_t>(named.size())) + " more";
  return text;
}

}  // namespace scopeprof_cli
