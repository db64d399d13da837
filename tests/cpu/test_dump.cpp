// dump_trace(path): the report so far written at any time, nothing reset; SCOPEPROF_DUMP_SIGNAL: the same
// from outside the program, written by the drain thread after the signal handler counted the request.
#include "output_check.hpp"
#include "temp_files.hpp"
#include "trace_check.hpp"

#include "internals.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <csignal>

#include <signal.h>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include "doctest_checks.hpp"  // last: doctest's CHECK, not glog's (unity build)

namespace {

using namespace scopeprof;

struct restore_policy {
  std::string policy = collect().timeline().policy;
  ~restore_policy() {
    set_trace_policy(policy);
    reset();
  }
};

bool drain_thread_off() {
  const char* env = std::getenv("SCOPEPROF_DRAIN");
  return env != nullptr && std::string(env) == "0";
}

}  // namespace

TEST_CASE("dump_trace: the flight recorder's newest scopes, any time, nothing reset") {
  restore_policy guard;
  reset();
  REQUIRE(set_trace_policy("last:50"));
  for (int i = 0; i < 500; ++i) {
    PROF_SCOPE("dump scope");
  }
  { PROF_SCOPE("dump newest"); }
  sptest::temp_dir dir;
  const write_result res = dump_trace(dir / "flight.trace.json");
  REQUIRE_MESSAGE(res.ok(), res.message());
  const std::string text = sptest::read_file_bytes(dir / "flight.trace.json");
  CHECK(sptest::check_trace_format(text).empty());
  CHECK(text.find("dump newest") != std::string::npos);
  const report after = collect();  // the dump reset nothing
  CHECK(after.counts().recorded == 501);
  CHECK(after.timeline().kept == 50);
  // Other suffixes choose the format as SCOPEPROF_REPORT does; an unknown one gets a trace.
  REQUIRE(dump_trace(dir / "flight.speedscope.json").ok());
  CHECK(sptest::read_file_bytes(dir / "flight.speedscope.json").find("speedscope") != std::string::npos);
  REQUIRE(dump_trace(dir / "flight.dump").ok());
  CHECK(sptest::check_trace_format(sptest::read_file_bytes(dir / "flight.dump")).empty());
  // A path that cannot be written: the reason, and nothing thrown.
  const write_result bad = dump_trace(dir / "missing/dir/x.trace.json");
  CHECK_FALSE(bad.ok());
  CHECK(bad.message().find("missing/dir") != std::string::npos);
}

TEST_CASE("dump_trace: the dump file name pattern") {
  CHECK(detail::dump_path("a-%n.trace.json", 3) == "a-3.trace.json");
  CHECK(detail::dump_path("100%%-%q-%", 1) == "100%-%q-%");
  CHECK(detail::dump_path("p%p", 1) == "p" + std::to_string(static_cast<long long>(::getpid())));
}

#if defined(__unix__)
TEST_CASE("SCOPEPROF_DUMP_SIGNAL: a signal writes the dump from the drain thread; a program's own handler is kept") {
  restore_policy guard;
  reset();
  sptest::temp_dir dir;
  CHECK_FALSE(detail::install_dump_signal("HUP-ish", dir / "x-%n.trace.json"));
  // A handler the program installed is never replaced.
  const auto mine = [](int) {};
  std::signal(SIGUSR2, +mine);
  CHECK_FALSE(detail::install_dump_signal("usr2", dir / "x-%n.trace.json"));
  std::signal(SIGUSR2, SIG_DFL);
  struct sigaction info_handler {};  // an sa_sigaction handler is kept as well
  info_handler.sa_sigaction = [](int, siginfo_t*, void*) {};
  info_handler.sa_flags = SA_SIGINFO;
  sigemptyset(&info_handler.sa_mask);
  REQUIRE(::sigaction(SIGUSR2, &info_handler, nullptr) == 0);
  CHECK_FALSE(detail::install_dump_signal("USR2", dir / "x-%n.trace.json"));
  struct sigaction now {};
  REQUIRE(::sigaction(SIGUSR2, nullptr, &now) == 0);
  CHECK((now.sa_flags & SA_SIGINFO) != 0);
  std::signal(SIGUSR2, SIG_DFL);
  const bool installed = detail::install_dump_signal("SIGUSR1", dir / "dump-%n.trace.json");
  if (drain_thread_off()) {
    CHECK_FALSE(installed);  // nobody would write it
    return;
  }
  REQUIRE(installed);
  for (int i = 0; i < 100; ++i) {
    PROF_SCOPE("signalled scope");
  }
  REQUIRE(std::raise(SIGUSR1) == 0);
  const std::string path = dir / "dump-1.trace.json";
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  std::string text;
  while (std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    if (!std::filesystem::exists(path)) continue;
    text = sptest::read_file_bytes(path);
    if (sptest::check_trace_format(text).empty()) break;  // complete
  }
  CHECK(sptest::check_trace_format(text).empty());
  CHECK(text.find("signalled scope") != std::string::npos);
  std::signal(SIGUSR1, SIG_DFL);
}
#endif
