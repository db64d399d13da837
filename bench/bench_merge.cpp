// Merging the reports of a large job (issue 18): N rank reports (default 1024) of a realistic size, merged
// by the scopeprof tool's merge (load one report, fold it, drop it). Goal: at most 5 s on the CI machine,
// with the peak memory of about one report plus the merged aggregates.
//
//   scopeprof_bench_merge [--ranks N] [--steps S] [--dir D]
//
// The reports come from this process: a training-loop shape (step > data, forward > 32 layers > attention,
// mlp, norm; backward likewise; optimizer) recorded with PROF_SCOPE for S steps (default 100) at 8
// different speeds, each written as JSON and saved once per rank with that rank's number. It prints the
// merge time, its ratio to the goal and to a baseline measured here (reading and parsing the same files
// with nlohmann::json, which any merge must do), and the peak resident set during the merge against that
// of loading one report.
#include "commands.hpp"
#include "report_file.hpp"

#include <scopeprof.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

volatile std::uint64_t g_sink = 0;

void work(std::uint64_t n) {
  for (std::uint64_t i = 0; i < n; ++i) g_sink = g_sink + i * 2654435761u;
}

/// One pass of the model at speed `k` (1..8): about 200 scopes a step.
void record_steps(int steps, std::uint64_t k) {
  static const std::vector<std::string> layers = [] {
    std::vector<std::string> v;
    for (int i = 0; i < 32; ++i) v.push_back("layer " + std::to_string(i));
    return v;
  }();
  for (int s = 0; s < steps; ++s) {
    PROF_SCOPE("step");
    {
      PROF_SCOPE("data");
      work(200 * k);
    }
    for (const char* phase : {"forward", "backward"}) {
      PROF_SCOPE_DYN(phase);
      for (const auto& layer : layers) {
        PROF_SCOPE_DYN(layer);
        {
          PROF_SCOPE("attention");
          work(40 * k + static_cast<std::uint64_t>(s % 7));
        }
        {
          PROF_SCOPE("mlp");
          work(30 * k);
        }
        {
          PROF_SCOPE("norm");
          work(5 * k);
        }
      }
    }
    PROF_SCOPE("optimizer");
    work(100 * k);
  }
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// Peak resident set (KiB) since the last reset_peak(); -1 where Linux does not say.
long peak_kib() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stol(line.substr(6));
  return -1;
}
void reset_peak() { std::ofstream("/proc/self/clear_refs") << "5"; }

struct settings {
  int ranks = 1024;
  int steps = 100;
  std::string dir;
};

/// Writes the N rank files; returns their paths and total bytes.
std::vector<std::string> write_reports(const settings& s, std::uint64_t& bytes) {
  std::vector<std::string> variants;
  for (std::uint64_t k = 1; k <= 8; ++k) {
    scopeprof::reset();
    record_steps(s.steps, k);
    variants.push_back(scopeprof::collect().json());
  }
  std::vector<std::string> paths;
  bytes = 0;
  for (int r = 0; r < s.ranks; ++r) {
    nlohmann::json doc = nlohmann::json::parse(variants[static_cast<std::size_t>(r) % variants.size()]);
    doc["process"]["rank"] = r;
    doc["process"]["world_size"] = s.ranks;
    doc["process"]["local_rank"] = r % 8;
    doc["process"]["pid"] = 10000 + r;
    doc["process"]["host"] = "node" + std::to_string(r / 8);
    const std::string text = doc.dump();
    bytes += text.size();
    paths.push_back(s.dir + "/run." + std::to_string(r) + ".json");
    std::ofstream(paths.back(), std::ios::binary) << text;
  }
  return paths;
}

bool parse_args(int argc, char** argv, settings& s) {
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--ranks")) s.ranks = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--steps")) s.steps = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--dir")) s.dir = argv[i + 1];
    else return false;
  }
  return argc % 2 == 1 && s.ranks > 0 && s.steps > 0;
}

}  // namespace

int main(int argc, char** argv) {
  settings s;
  if (!parse_args(argc, argv, s)) {
    std::fprintf(stderr, "usage: scopeprof_bench_merge [--ranks N] [--steps S] [--dir D]\n");
    return 2;
  }
  const bool own_dir = s.dir.empty();
  if (own_dir) s.dir = (std::filesystem::temp_directory_path() / ("scopeprof_bench_merge_" + std::to_string(::getpid()))).string();
  std::filesystem::create_directories(s.dir);
  std::uint64_t bytes = 0;
  const std::vector<std::string> paths = write_reports(s, bytes);
  scopeprof::set_enabled(false);

  // Baseline: read and parse every file (what a merge cannot avoid).
  auto t0 = std::chrono::steady_clock::now();
  std::size_t nodes = 0;
  for (const auto& p : paths) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    nodes += nlohmann::json::parse(ss.str())["tree"].size();
  }
  const double parse_s = seconds_since(t0);

  reset_peak();
  scopeprof_cli::report_file one;
  std::string error;
  if (!scopeprof_cli::load_report(paths[0], one, error)) {
    std::fprintf(stderr, "%s\n", error.c_str());
    return 1;
  }
  const long one_kib = peak_kib();
  one = scopeprof_cli::report_file{};

  // The full loader (what show and diff pay per report: a document tree with every key checked for
  // repeats, then every table), on the first reports.
  const std::size_t full_n = std::min<std::size_t>(paths.size(), 64);
  t0 = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < full_n; ++i)
    if (!scopeprof_cli::load_report(paths[i], one, error)) {
      std::fprintf(stderr, "%s\n", error.c_str());
      return 1;
    }
  const double full_ms = seconds_since(t0) * 1e3 / static_cast<double>(full_n);
  one = scopeprof_cli::report_file{};

  reset_peak();
  scopeprof_cli::merge_options o;
  o.inputs = paths;
  o.output = s.dir + "/merged.json";
  std::ostringstream out, err;
  t0 = std::chrono::steady_clock::now();
  const int rc = scopeprof_cli::run_merge(o, out, err);
  const double merge_s = seconds_since(t0);
  const long merge_kib = peak_kib();
  if (rc != 0) {
    std::fprintf(stderr, "merge failed (%d): %s\n", rc, err.str().c_str());
    return 1;
  }
  const double goal_s = 5.0;
  std::printf("reports: %d ranks, %zu call paths each, %.1f MiB of JSON (%.0f KiB a report)\n", s.ranks,
              nodes / paths.size(), static_cast<double>(bytes) / (1 << 20), static_cast<double>(bytes) / 1024 / s.ranks);
  std::printf("baseline, read + parse every file (nlohmann::json): %.2f s\n", parse_s);
  std::printf("merge (load, fold, write merged.json):               %.2f s = %.2fx the baseline, %.2fx the goal "
              "(%.0f s)%s\n",
              merge_s, merge_s / parse_s, merge_s / goal_s, goal_s, merge_s <= goal_s ? "" : "  GOAL MISSED");
  const double parse_ms = parse_s * 1e3 / static_cast<double>(paths.size());
  std::printf("full loader (show, diff), one report: %.2f ms = %.2fx reading + parsing one (%.2f ms)\n", full_ms,
              full_ms / parse_ms, parse_ms);
  std::printf("peak resident set: merge %.1f MiB, loading one report %.1f MiB (process baseline included)\n",
              merge_kib / 1024.0, one_kib / 1024.0);
  if (own_dir) std::filesystem::remove_all(s.dir);
  return merge_s <= goal_s ? 0 : 1;
}
