// scopeprof: which process of a job this is. Rank, world size and local rank come from the launcher's
// environment, or from set_rank(), which overrides it; then the host name, the process id and the Unix
// time of the trace origin. Every report carries the result (report::process()).
#pragma once

#include <scopeprof/clock.hpp>
#include <scopeprof/config.hpp>
#include <scopeprof/report_types.hpp>

#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#if defined(_WIN32)
#include <process.h>
#include <winsock2.h>
#else
#include <unistd.h>
#endif

SCOPEPROF_NAMESPACE_BEGIN
namespace detail {

struct launcher_rank {
  std::int64_t rank = 0;
  std::int64_t world_size = 1;
  std::int64_t local_rank = 0;
  std::string source;  // the variable the rank came from, empty when none was set
};

/// A variable holding a whole number >= 0, nothing else; false when unset or malformed.
inline bool env_nonnegative(const char* name, std::int64_t& out) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return false;
  const char* end = v + std::strlen(v);
  std::int64_t x = 0;
  const auto r = std::from_chars(v, end, x);
  if (r.ec != std::errc() || r.ptr != end || x < 0) return false;
  out = x;
  return true;
}

/// The launcher's rank, world size and local rank: the first launcher whose rank variable is set (a whole
/// number >= 0), in this order: torchrun / torch.distributed (RANK, WORLD_SIZE, LOCAL_RANK), Open MPI
/// (OMPI_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK), MPICH / Intel MPI (PMI_RANK, PMI_SIZE, MPI_LOCALRANKID),
/// Slurm (SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID). A world size that is missing or not above the rank
/// becomes rank + 1; a missing local rank is 0. None set: rank 0 of 1.
inline launcher_rank rank_from_env() {
  struct names {
    const char* rank;
    const char* size;
    const char* local;
  };
  static constexpr names launchers[] = {{"RANK", "WORLD_SIZE", "LOCAL_RANK"},
                                        {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"},
                                        {"PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID"},
                                        {"SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"}};
  launcher_rank r;
  for (const names& n : launchers) {
    std::int64_t rank = 0, world = 0, local = 0;
    if (!env_nonnegative(n.rank, rank)) continue;
    r.rank = rank;
    r.world_size = env_nonnegative(n.size, world) && world > rank ? world : rank + 1;
    r.local_rank = env_nonnegative(n.local, local) ? local : 0;
    r.source = n.rank;
    break;
  }
  return r;
}

/// set_rank()'s values; `set` false until it is called.
struct rank_override {
  std::mutex mu;
  bool set = false;
  std::int64_t rank = 0;
  std::int64_t world_size = 1;
};

inline rank_override& the_rank_override() {
  static rank_override* o = new rank_override();  // never destroyed: exit handlers read it
  return *o;
}

/// This process's rank, world size and local rank: set_rank()'s when it was called (the local rank still
/// from the launcher, when the launcher's rank is the same), else the launcher's.
inline launcher_rank current_rank() {
  launcher_rank r = rank_from_env();
  rank_override& o = the_rank_override();
  std::lock_guard<std::mutex> lock(o.mu);
  if (o.set) {
    if (r.source.empty() || r.rank != o.rank) r.local_rank = 0;
    r.rank = o.rank;
    r.world_size = o.world_size;
    r.source = "set_rank()";
  }
  return r;
}

inline std::int64_t current_process_id() noexcept {
#if defined(_WIN32)
  return static_cast<std::int64_t>(::_getpid());
#else
  return static_cast<std::int64_t>(::getpid());
#endif
}

/// The host name as the system gives it ("unknown" when it cannot say).
inline std::string current_host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0 || buf[0] == '\0') return "unknown";
  return std::string(buf);
}

/// The executable's file name without its directory (Linux: /proc/self/exe), "" when unknown: the merge
/// and diff of the scopeprof tool tell reports of different programs apart by it.
inline std::string current_program_name() {
#if defined(__linux__)
  char buf[4096];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return std::string();
  std::string path(buf, static_cast<std::size_t>(n));
  const std::string deleted = " (deleted)";  // the executable was replaced while it ran
  if (path.size() > deleted.size() && path.compare(path.size() - deleted.size(), deleted.size(), deleted) == 0)
    path.resize(path.size() - deleted.size());
  const std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
#else
  return std::string();
#endif
}

/// Unix time (ns) of the steady-clock instant `origin_ns`, from one pairing of the two clocks per process
/// (so every output of a process says the same). False when it does not fit.
inline bool unix_ns_of_steady(std::int64_t origin_ns, std::int64_t& out) noexcept {
  static const std::int64_t unix_minus_steady = [] {
    const std::int64_t steady = steady_now_ns();
    const std::int64_t unix_ns = static_cast<std::int64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count());
    return unix_ns - steady;
  }();
  if ((unix_minus_steady > 0 && origin_ns > INT64_MAX - unix_minus_steady) ||
      (unix_minus_steady < 0 && origin_ns < INT64_MIN - unix_minus_steady))
    return false;
  out = origin_ns + unix_minus_steady;
  return true;
}

/// Everything but the devices (the CUDA backend adds those at collect()).
inline process_desc current_process(std::int64_t origin_ns) {
  process_desc p;
  const launcher_rank r = current_rank();
  p.rank = r.rank;
  p.world_size = r.world_size;
  p.local_rank = r.local_rank;
  p.rank_source = r.source;
  p.host = current_host_name();
  p.program = current_program_name();
  p.pid = current_process_id();
  if (!unix_ns_of_steady(origin_ns, p.base_unix_ns)) p.base_unix_ns = 0;
  return p;
}

}  // namespace detail
SCOPEPROF_NAMESPACE_END
