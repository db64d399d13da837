// scopeprof: SCOPEPROF_DUMP_SIGNAL: a signal sent to the program writes the report so far, timeline
// included (dump_trace()), from outside, e.g. `kill -USR1 <pid>` on a job that seems stuck.
//
// The handler only counts the request (one lock-free atomic add: async-signal-safe); the background drain
// thread, which wakes at least every 10 ms, writes the file outside any signal context. So the signal
// needs the drain thread: with SCOPEPROF_DRAIN=0 it is not installed, and neither is it when the program
// already handles that signal (scopeprof never replaces a handler). Files go to SCOPEPROF_DUMP_PATH
// (default scopeprof-%p-%n.trace.json: %p the process id, %n the dump's number from 1; the format from the
// suffix, as for dump_trace()).
#pragma once

#include <scopeprof/config.hpp>
#include <scopeprof/detail/drain.hpp>
#include <scopeprof/detail/log.hpp>
#include <scopeprof/detail/output_path.hpp>
#include <scopeprof/detail/process_identity.hpp>
#include <scopeprof/detail/recorder.hpp>
#include <scopeprof/runtime.hpp>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <string>

#if defined(__unix__) || defined(__APPLE__)
#include <signal.h>
#include <unistd.h>
#define SCOPEPROF_HAS_DUMP_SIGNAL 1
#else
#define SCOPEPROF_HAS_DUMP_SIGNAL 0
#endif

SCOPEPROF_NAMESPACE_BEGIN
namespace detail {

/// Dump requests counted by the signal handler; served ones by the drain thread.
inline std::atomic<std::uint64_t> g_dump_requests{0};

struct dump_settings {
  std::mutex mu;                 // the pattern and the counters below (the drain thread and installers)
  std::string pattern;           // empty: no signal installed
  std::uint64_t served = 0;      // requests answered
  std::uint64_t written = 0;     // files numbered so far (%n)
};

inline dump_settings& the_dump_settings() {
  static dump_settings* s = new dump_settings();  // never destroyed: the drain thread may run at exit
  return *s;
}

#if SCOPEPROF_HAS_DUMP_SIGNAL
inline void on_dump_signal(int) { g_dump_requests.fetch_add(1, std::memory_order_relaxed); }

/// USR1, SIGUSR1, USR2, SIGUSR2 (any case) or a signal number; 0 when not understood.
inline int parse_dump_signal(std::string name) {
  for (char& c : name) c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
  if (name.rfind("SIG", 0) == 0) name = name.substr(3);
  if (name == "USR1") return SIGUSR1;
  if (name == "USR2") return SIGUSR2;
  if (name.empty() || name.size() > 3 || name.find_first_not_of("0123456789") != std::string::npos) return 0;
  const int n = std::atoi(name.c_str());
  return n > 0 && n != SIGKILL && n != SIGSTOP ? n : 0;
}
#endif

/// Install the dump signal `name` (SCOPEPROF_DUMP_SIGNAL) writing to `pattern`. False, with a warning, when
/// it cannot be served; never replaces a handler the program installed.
SCOPEPROF_API bool install_dump_signal(const std::string& name, const std::string& pattern) noexcept {
  const std::string what = "SCOPEPROF_DUMP_SIGNAL=" + name + ": ";
#if SCOPEPROF_HAS_DUMP_SIGNAL
  try {
    const int signo = parse_dump_signal(name);
    if (signo == 0) {
      warn(what + "ignored: expected USR1, USR2 or a signal number");
      return false;
    }
    registry& r = the_registry();
    start_drain_thread();
    if (r.drain_thread.load(std::memory_order_acquire) != drain_running) {
      warn(what + "ignored: the dump is written by the background drain thread, which is off (SCOPEPROF_DRAIN=0) "
                  "or could not start");
      return false;
    }
    struct sigaction old {};
    if (::sigaction(signo, nullptr, &old) != 0) {
      warn(what + "ignored: sigaction failed");
      return false;
    }
    const bool theirs = (old.sa_flags & SA_SIGINFO) != 0 || (old.sa_handler != SIG_DFL && old.sa_handler != &on_dump_signal);
    if (theirs) {  // a handler, or SIG_IGN: the program decided what that signal does
      warn(what + "ignored: the program handles that signal already");
      return false;
    }
    {
      dump_settings& s = the_dump_settings();
      std::lock_guard<std::mutex> lock(s.mu);
      s.pattern = pattern.empty() ? "scopeprof-%p-%n.trace.json" : pattern;
      s.served = g_dump_requests.load(std::memory_order_relaxed);
    }
    struct sigaction act {};
    act.sa_handler = &on_dump_signal;
    sigemptyset(&act.sa_mask);
    act.sa_flags = SA_RESTART;
    if (::sigaction(signo, &act, nullptr) != 0) {
      warn(what + "ignored: sigaction failed");
      return false;
    }
    return true;
  } catch (...) {
    warn(what + "ignored: out of memory");
    return false;
  }
#else
  (void)pattern;
  warn(what + "ignored: signals are not supported on this platform");
  return false;
#endif
}

/// Called by the drain thread between passes (no lock held): write one file for the requests since the
/// last call, if any.
inline void serve_dump_requests() noexcept {
  const std::uint64_t requests = g_dump_requests.load(std::memory_order_relaxed);
  std::string path;
  try {
    dump_settings& s = the_dump_settings();
    std::lock_guard<std::mutex> lock(s.mu);
    if (s.pattern.empty() || requests == s.served) return;
    s.served = requests;
    const process_desc proc = current_process(the_registry().clock_start.ns);
    path = dump_path(job_output_path(s.pattern, "SCOPEPROF_DUMP_PATH", proc), ++s.written);
  } catch (...) {
    return;
  }
  const write_result res = dump_trace(path);
  if (res) std::fprintf(stderr, "scopeprof: wrote %s (SCOPEPROF_DUMP_SIGNAL)\n", path.c_str());
  else warn("SCOPEPROF_DUMP_SIGNAL: " + res.message());
}

}  // namespace detail
SCOPEPROF_NAMESPACE_END
