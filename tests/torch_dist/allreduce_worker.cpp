// One rank of a two-rank LibTorch job over c10d (gloo, CPU tensors) for tests/torch_dist/two_ranks.sh: each
// step is "compute" (a fixed wall time; one rank slowed on purpose) and "all_reduce" (a gloo all_reduce of
// a tensor, waited for), under "step". The all_reduce of a fast rank holds its wait for the slow one, so
// the merge must name the slow rank the straggler of compute and the fast one of all_reduce. Checks the
// reduced values, writes its report at exit to SCOPEPROF_REPORT ("{rank}" in the path), exits 0.
//
//   RANK=r WORLD_SIZE=w allreduce_worker STORE_FILE [--steps N] [--slow-rank R] [--factor F] [--compute-us U]
#include <scopeprof.hpp>
#include <scopeprof/detail/process_identity.hpp>

#include "../launchers/wall_wait.hpp"

#include <torch/csrc/distributed/c10d/FileStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/torch.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <thread>

namespace {

using sptest::wait_us;

struct settings {
  std::string store;
  int steps = 20;
  long slow_rank = 1;
  double factor = 3.0;
  double compute_us = 2000;
};

bool parse(int argc, char** argv, settings& s) {
  if (argc < 2 || argc % 2 != 0) return false;
  s.store = argv[1];
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string key = argv[i];
    const char* value = argv[i + 1];
    if (key == "--steps") s.steps = std::atoi(value);
    else if (key == "--slow-rank") s.slow_rank = std::atol(value);
    else if (key == "--factor") s.factor = std::atof(value);
    else if (key == "--compute-us") s.compute_us = std::atof(value);
    else return false;
  }
  return s.steps > 0 && s.factor > 0 && s.compute_us > 0;
}

int run(const settings& s) {
  const scopeprof::detail::launcher_rank me = scopeprof::detail::current_rank();
  const int rank = static_cast<int>(me.rank), world = static_cast<int>(me.world_size);
  if (world < 2) {
    std::fprintf(stderr, "allreduce_worker: set RANK and WORLD_SIZE (at least 2 ranks)\n");
    return 2;
  }
  auto store = c10::make_intrusive<c10d::FileStore>(s.store, world);
  auto options = c10d::ProcessGroupGloo::Options::create();
  options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
  auto group = c10::make_intrusive<c10d::ProcessGroupGloo>(store, rank, world, options);
  const double expected = world * (world + 1) / 2.0;  // each rank contributes rank + 1
  for (int step = 0; step < s.steps; ++step) {
    PROF_STEP();
    PROF_SCOPE("step");
    {
      PROF_SCOPE("compute");
      wait_us(s.compute_us * (rank == s.slow_rank ? s.factor : 1.0));
    }
    std::vector<at::Tensor> tensors{torch::full({1024}, static_cast<float>(rank + 1))};
    {
      PROF_SCOPE("all_reduce");
      group->allreduce(tensors)->wait();
    }
    if (tensors[0][0].item<float>() != static_cast<float>(expected) || tensors[0][1023].item<float>() != static_cast<float>(expected)) {
      std::fprintf(stderr, "allreduce_worker: rank %d step %d: reduced %f, expected %f\n", rank, step,
                   static_cast<double>(tensors[0][0].item<float>()), expected);
      return 1;
    }
  }
  PROF_STEP();
  group->barrier()->wait();  // no rank tears the group down while another still reduces
  std::printf("rank %d of %d: %d steps, all_reduce sums right\n", rank, world, s.steps);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  settings s;
  if (!parse(argc, argv, s)) {
    std::fprintf(stderr, "usage: RANK=r WORLD_SIZE=w allreduce_worker STORE_FILE [--steps N] [--slow-rank R] [--factor F] "
                         "[--compute-us U]\n");
    return 2;
  }
  try {
    return run(s);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "allreduce_worker: %s\n", e.what());
    return 1;
  }
}
