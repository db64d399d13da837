// scopeprof: the timeline: which finished scopes are kept one by one for traces, and where. The tables
// never depend on it (every scope is folded into them, drain.hpp); SCOPEPROF_TRACE only bounds what the
// trace, speedscope and HTML outputs can show:
//   all        every scope up to SCOPEPROF_MAX_RECORDS, then the timeline stops growing (the default)
//   off        no scope: tables only
//   last:N     the newest N scopes of the process (a flight recorder)
//   steps:A-B  the scopes that overlap steps A to B (PROF_STEP(); step N runs from mark N to mark N + 1)
#pragma once

#include <scopeprof/config.hpp>
#include <scopeprof/detail/device_fold.hpp>
#include <scopeprof/detail/recorder.hpp>
#include <scopeprof/detail/raw_snapshot.hpp>
#include <scopeprof/detail/work_match.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <vector>

SCOPEPROF_NAMESPACE_BEGIN
namespace detail {

enum class trace_mode : std::uint8_t { all, off, last, steps };

struct trace_policy {
  trace_mode mode = trace_mode::all;
  std::uint64_t last_n = 0;                    // last:N
  std::uint64_t first_step = 0, last_step = 0;  // steps:A-B
  std::string text = "all";
};

/// Parse a SCOPEPROF_TRACE value (empty: all). False, with `why`, for anything else; `out` is then unchanged.
inline bool parse_trace_policy(const std::string& value, trace_policy& out, std::string& why) {
  const auto number = [](const std::string& s, std::uint64_t& n) {
    if (s.empty() || s.size() > 18 || s.find_first_not_of("0123456789") != std::string::npos) return false;
    n = std::strtoull(s.c_str(), nullptr, 10);
    return true;
  };
  trace_policy p;
  if (value.empty() || value == "all") {
    out = p;
    return true;
  }
  if (value == "off") {
    p.mode = trace_mode::off;
  } else if (value.rfind("last:", 0) == 0) {
    p.mode = trace_mode::last;
    if (!number(value.substr(5), p.last_n) || p.last_n == 0 || p.last_n > (std::uint64_t{1} << 32)) {
      why = "last:N needs a whole number N from 1 to 2^32";
      return false;
    }
  } else if (value.rfind("steps:", 0) == 0) {
    p.mode = trace_mode::steps;
    const std::string range = value.substr(6);
    const std::size_t dash = range.find('-');
    const bool ok = dash == std::string::npos
                        ? number(range, p.first_step) && (p.last_step = p.first_step, true)
                        : number(range.substr(0, dash), p.first_step) && number(range.substr(dash + 1), p.last_step);
    if (!ok || p.last_step < p.first_step) {
      why = "steps:A-B needs step numbers A <= B (or steps:A for one step)";
      return false;
    }
  } else {
    why = "expected all, off, last:N or steps:A-B";
    return false;
  }
  p.text = value;
  out = p;
  return true;
}

/// One thread's kept records, in blocks that grow from 64 to 4096 records (a thread with a few scopes holds
/// little; growing never copies what is there), with the log index of each as runs of consecutive indices,
/// and the device outcome and declared work of those that have one (by position).
class record_store {
 public:
  static constexpr std::uint64_t first_block = 64, max_block = 4096;

  /// May throw (out of memory); nothing is added then.
  void push(std::uint64_t index, const record& rec, const device_outcome& device = {}, const joined_work& work = {}) {
    if (size_ == room_) {
      const std::uint64_t n = blocks_.empty() ? first_block : (std::min)(blocks_.back().size * 4, max_block);
      blocks_.push_back({std::unique_ptr<record[]>(new record[n]), n});
      room_ += n;
    }
    const bool new_run = runs_.empty() || runs_.back().first_index + (size_ - runs_.back().position) != index;
    if (new_run) runs_.push_back({index, size_});
    const bool timed = device.status != device_status::not_timed;
    try {
      if (timed) device_.push_back({size_, device});
      if (work.has) work_.push_back({size_, work});
    } catch (...) {
      if (timed && !device_.empty() && device_.back().first == size_) device_.pop_back();
      if (new_run) runs_.pop_back();
      throw;
    }
    block& b = blocks_.back();
    b.items[b.size - (room_ - size_)] = rec;
    ++size_;
  }
  std::uint64_t size() const noexcept { return size_; }
  /// f(record, device outcome or nullptr, declared work or nullptr) for each record kept, in order.
  template <class F>
  void for_each(F&& f) const {
    std::uint64_t left = size_, position = 0;
    std::size_t d = 0, w = 0;
    for (const block& b : blocks_)
      for (std::uint64_t i = 0; i < b.size && left > 0; ++i, --left, ++position) {
        const bool timed = d < device_.size() && device_[d].first == position;
        const bool worked = w < work_.size() && work_[w].first == position;
        f(b.items[i], timed ? &device_[d++].second : nullptr, worked ? &work_[w++].second : nullptr);
      }
  }
  const std::vector<record_run>& runs() const noexcept { return runs_; }
  /// Empty again; the memory goes back.
  void clear() noexcept {
    std::vector<block>().swap(blocks_);
    std::vector<record_run>().swap(runs_);
    std::vector<std::pair<std::uint64_t, device_outcome>>().swap(device_);
    std::vector<std::pair<std::uint64_t, joined_work>>().swap(work_);
    size_ = room_ = 0;
  }

 private:
  struct block {
    std::unique_ptr<record[]> items;
    std::uint64_t size;
  };
  std::vector<block> blocks_;
  std::vector<record_run> runs_;
  std::vector<std::pair<std::uint64_t, device_outcome>> device_;  // position, outcome
  std::vector<std::pair<std::uint64_t, joined_work>> work_;       // position, declared work
  std::uint64_t size_ = 0, room_ = 0;
};

/// last:N: the newest N records of the process, oldest first, each with its thread and log index.
class record_ring {
 public:
  struct entry {
    record rec;
    std::uint64_t index;
    const thread_buffer* thread;
    device_outcome device;
    joined_work work;
  };
  /// Room for n records (allocated as they come). Forgets what it held.
  void reset(std::uint64_t n) noexcept {
    std::vector<entry>().swap(items_);
    capacity_ = n;
    next_ = 0;
  }
  /// Keep one record; returns true when it pushed out the oldest one. May throw (out of memory).
  bool put(const entry& e) {
    if (items_.size() < capacity_) {
      items_.push_back(e);
      return false;
    }
    items_[next_] = e;
    next_ = next_ + 1 == items_.size() ? 0 : next_ + 1;
    return true;
  }
  std::uint64_t size() const noexcept { return items_.size(); }
  /// f(entry) from the oldest to the newest.
  template <class F>
  void for_each(F&& f) const {
    for (std::size_t i = 0; i < items_.size(); ++i) f(items_[(next_ + i) % items_.size()]);
  }

 private:
  std::vector<entry> items_;
  std::uint64_t capacity_ = 0;
  std::size_t next_ = 0;  // the oldest entry once the ring is full
};

}  // namespace detail
SCOPEPROF_NAMESPACE_END
