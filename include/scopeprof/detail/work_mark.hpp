// scopeprof: what a declaration of work leaves behind. PROF_SCOPE_WORK and add_work() append one mark to the
// calling thread's work log; the scope's 24-byte record stays as it is, so scopes that declare nothing pay
// nothing. The drain later joins each mark to its scope's record (work_match.hpp).
#pragma once

#include <scopeprof/config.hpp>
#include <scopeprof/detail/chunked_log.hpp>

#include <cstdint>

SCOPEPROF_NAMESPACE_BEGIN
namespace detail {

/// One declaration of work for the innermost scope open on the thread. That scope's record is the first
/// record at log index >= records_at with nesting depth `depth`, and it must span `ticks`: a record that
/// does not was another scope, and the declared one was never recorded (dropped).
struct work_mark {
  std::uint64_t records_at;  // the thread's published record count at the declaration
  std::uint64_t ticks;       // host counter at the declaration (inside the scope)
  double bytes;
  double flops;
  std::uint32_t depth;       // the scope's nesting level (0 = outermost), saturated as records are
  std::uint32_t reserved;
};
static_assert(sizeof(work_mark) == 40, "work marks are meant to stay small");

using work_chunk = log_chunk<work_mark>;
constexpr std::uint32_t work_chunk_marks = 1024;
/// Marks held in memory (not joined to their scopes yet), all threads; past it a declaration is lost.
constexpr std::uint64_t max_work_marks = std::uint64_t{1} << 20;

}  // namespace detail
SCOPEPROF_NAMESPACE_END
