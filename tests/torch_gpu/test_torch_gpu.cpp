// LibTorch with CUDA (the H200 with torch 2.11): our scopes in the torch profiler's trace and table, and the
// scope's CUDA-event device span against torch's gpu_user_annotation span. Skips, passing, without a GPU.
#include <scopeprof.hpp>
#include <scopeprof/torch_session.hpp>

#include <doctest/doctest.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

bool contains(const std::string& s, const std::string& needle) { return s.find(needle) != std::string::npos; }

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool have_gpu() {
  if (torch::cuda::is_available()) return true;
  MESSAGE("skipped: torch sees no CUDA device");
  return false;
}

// Linear followed by four unary and one binary elementwise op with a residual (the eager tail).
torch::Tensor eager_step(torch::nn::Linear& lin, const torch::Tensor& x, const torch::Tensor& residual) {
  PROF_SCOPE("torch_gpu.block");
  torch::Tensor y;
  {
    PROF_SCOPE("torch_gpu.linear");
    y = lin(x);
  }
  PROF_SCOPE("torch_gpu.tail");
  y = torch::relu(y);
  y = torch::mul(y, 0.5);
  y = torch::add(y, 1.0);
  y = torch::tanh(y);
  return torch::add(y, residual);
}

}  // namespace

TEST_CASE("torch GPU: our scopes are user_annotation and gpu_user_annotation events in the saved trace") {
  if (!have_gpu()) return;
  const auto dev = torch::Device(torch::kCUDA);
  torch::nn::Linear lin(1024, 1024);
  lin->to(dev);
  const auto x = torch::randn({4096, 1024}, dev);
  const auto res = torch::randn({4096, 1024}, dev);
  eager_step(lin, x, res);
  torch::cuda::synchronize();

  scopeprof::torch_profile session;
  REQUIRE_MESSAGE(session.running(), session.error());
  for (int i = 0; i < 3; ++i) eager_step(lin, x, res);
  torch::cuda::synchronize();
  auto result = session.stop();
  REQUIRE(result.error().empty());
  CHECK(result.cuda().requested);
  CHECK(result.cuda().device_events);
  CHECK_FALSE(result.cuda().missing());

  const std::string path = "scopeprof_torch_gpu_trace.json";
  const auto w = result.save_chrome_trace(path);
  REQUIRE_MESSAGE(w, w.message());
  const std::string trace = read_file(path);
  CHECK(contains(trace, "\"user_annotation\""));
  CHECK(contains(trace, "\"gpu_user_annotation\""));
  for (const char* name : {"\"torch_gpu.block\"", "\"torch_gpu.linear\"", "\"torch_gpu.tail\""}) {
    INFO(name);
    CHECK(contains(trace, name));
  }
  // Kineto tags each kernel with the innermost user annotation open at its launch, so the GPU spans belong
  // to the inner scopes (linear, tail); the block that contains them gets none of its own.
  int gpu_linear = 0, gpu_tail = 0, gpu_block = 0;
  for (const auto& e : result.events()) {
    if (e.kind != scopeprof::torch_event_kind::gpu_user_annotation) continue;
    gpu_linear += e.name == "torch_gpu.linear";
    gpu_tail += e.name == "torch_gpu.tail";
    gpu_block += e.name == "torch_gpu.block";
  }
  CHECK(gpu_linear == 3);
  CHECK(gpu_tail == 3);
  CHECK(gpu_block == 0);
}

TEST_CASE("torch GPU: the scope's CUDA-event span and torch's gpu_user_annotation span agree within 5%") {
  if (!have_gpu()) return;
  const auto dev = torch::Device(torch::kCUDA);
  const auto a = torch::randn({4096, 4096}, dev);
  const auto b = torch::randn({4096, 4096}, dev);
  auto work = [&] {
    PROF_SCOPE("torch_gpu.matmuls");  // device-timed on torch's current stream
    torch::Tensor c = a;
    for (int i = 0; i < 8; ++i) c = torch::matmul(c, b) * 1e-3;
    return c;
  };
  work();
  torch::cuda::synchronize();
  scopeprof::reset();

  scopeprof::torch_profile session;
  REQUIRE_MESSAGE(session.running(), session.error());
  torch::cuda::synchronize();  // the GPU is idle when the scope begins: both spans start at its first kernel
  work();
  torch::cuda::synchronize();
  auto result = session.stop();
  REQUIRE(result.error().empty());

  const scopeprof::report rep = scopeprof::collect();
  const scopeprof::flat_row* row = rep.find("torch_gpu.matmuls");
  REQUIRE(row != nullptr);
  REQUIRE_MESSAGE(row->device_calls == 1, rep.sources().device);
  const double ours_ns = static_cast<double>(row->device_total_ns);

  double torch_ns = -1;
  for (const auto& e : result.events())
    if (e.kind == scopeprof::torch_event_kind::gpu_user_annotation && e.name == "torch_gpu.matmuls")
      torch_ns = static_cast<double>(e.duration_ns);
  REQUIRE(torch_ns > 0);
  MESSAGE("device span: scopeprof CUDA events " << ours_ns / 1e6 << " ms, torch gpu_user_annotation "
                                                 << torch_ns / 1e6 << " ms");
  CHECK(std::fabs(ours_ns - torch_ns) <= 0.05 * torch_ns);
}

TEST_CASE("torch GPU: the table for Linear + elementwise ops has the expected rows and marks") {
  if (!have_gpu()) return;
  const auto dev = torch::Device(torch::kCUDA);
  torch::nn::Linear lin(1024, 1024);
  lin->to(dev);
  const auto x = torch::randn({4096, 1024}, dev);
  const auto res = torch::randn({4096, 1024}, dev);
  eager_step(lin, x, res);
  torch::cuda::synchronize();

  scopeprof::torch_profile session(scopeprof::torch_profile_options{true, true});
  REQUIRE_MESSAGE(session.running(), session.error());
  for (int i = 0; i < 5; ++i) eager_step(lin, x, res);
  torch::cuda::synchronize();
  auto result = session.stop();
  REQUIRE(result.error().empty());
  const std::string table = result.table(/*group_by_shapes=*/true);
  MESSAGE(table);

  const auto rows = result.key_averages();
  using k = scopeprof::torch_event_kind;
  auto find = [&](k kind, const std::string& name) -> const scopeprof::torch_table_row* {
    for (const auto& r : rows)
      if (r.kind == kind && r.name == name) return &r;
    return nullptr;
  };
  const auto* block = find(k::user_annotation, "torch_gpu.block");
  const auto* block_span = find(k::gpu_user_annotation, "torch_gpu.tail");  // (innermost annotations only)
  const auto* linear = find(k::op, "aten::linear");
  const auto* addmm = find(k::op, "aten::addmm");
  const auto* tanh = find(k::op, "aten::tanh");
  REQUIRE(block);
  REQUIRE(block_span);
  REQUIRE((linear != nullptr || addmm != nullptr));
  REQUIRE(tanh);
  CHECK(block->calls == 5);
  CHECK(block->repeats_device_work);
  CHECK(block_span->repeats_device_work);
  CHECK(tanh->self_cuda_ns > 0);
  CHECK(tanh->repeats_device_work);

  std::int64_t kernel_ns = 0;
  int kernel_rows = 0;
  for (const auto& r : rows)
    if (r.kind == k::kernel) {
      ++kernel_rows;
      kernel_ns += r.self_cuda_ns;
      CHECK_FALSE(r.repeats_device_work);
    }
  CHECK(kernel_rows >= 5);  // a GEMM and the elementwise kernels
  // The block's CUDA total is the kernels launched inside it: every kernel in this session.
  CHECK(block->cuda_total_ns == kernel_ns);
  for (const auto& r : rows)
    if (r.kind == k::overhead) CHECK(r.cuda_total_ns == 0);

  CHECK(contains(table, "Self CUDA"));
  CHECK(contains(table, "kernel"));
  CHECK(contains(table, "[repeat]"));
  CHECK(contains(table, "[span]"));
  CHECK_FALSE(contains(table, "MISSING"));
}
