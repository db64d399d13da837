// One rank of a synthetic training job for the launcher tests: `steps` steps of forward, backward and
// sync, each a fixed wall time (sleep, then a short spin to the deadline), with one rank, or one scope on
// every rank, slowed on purpose. Sleeping keeps four ranks on two cores from slowing each other, which
// would hide the straggler. The rank comes from the launcher's environment
// (mpirun, torchrun, Slurm) as scopeprof reads it; the report is written at exit to SCOPEPROF_REPORT.
//
//   rank_worker [--steps N] [--slow-rank R] [--slow-scope NAME] [--factor F]
#include <scopeprof.hpp>
#include <scopeprof/detail/process_identity.hpp>

#include "wall_wait.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

namespace {

using sptest::wait_us;

struct settings {
  int steps = 20;
  long slow_rank = -1;     ///< the rank whose every scope is slower (the straggler)
  std::string slow_scope;  ///< the scope that is slower on every rank
  double factor = 1.0;
};

bool parse(int argc, char** argv, settings& s) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i];
    const char* value = argv[i + 1];
    if (key == "--steps") s.steps = std::atoi(value);
    else if (key == "--slow-rank") s.slow_rank = std::atol(value);
    else if (key == "--slow-scope") s.slow_scope = value;
    else if (key == "--factor") s.factor = std::atof(value);
    else return false;
  }
  return argc % 2 == 1 && s.steps > 0 && s.factor > 0;
}

}  // namespace

int main(int argc, char** argv) {
  settings s;
  if (!parse(argc, argv, s)) {
    std::fprintf(stderr, "usage: rank_worker [--steps N] [--slow-rank R] [--slow-scope NAME] [--factor F]\n");
    return 2;
  }
  const long rank = static_cast<long>(scopeprof::detail::current_rank().rank);
  const double straggle = rank == s.slow_rank ? s.factor : 1.0;
  const auto cost = [&](const char* scope, double us) { return us * straggle * (s.slow_scope == scope ? s.factor : 1.0); };
  for (int step = 0; step < s.steps; ++step) {
    PROF_SCOPE("step");
    {
      PROF_SCOPE("forward");
      wait_us(cost("forward", 2000));
    }
    {
      PROF_SCOPE("backward");
      wait_us(cost("backward", 4000));
    }
    {
      PROF_SCOPE("sync");
      wait_us(cost("sync", 1000));
    }
  }
  return 0;
}
