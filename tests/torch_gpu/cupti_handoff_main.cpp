// scopeprof's CUPTI collector and a torch profiler session in one process. CUPTI allows one subscriber per
// process, and Kineto keeps its subscription for the rest of the process once it has one, so each mode
// runs in its own process:
//
//   handoff  scopeprof collects kernels per scope, releases CUPTI (set_cupti(false)), then a torch profiler
//            session runs: it must get its CUDA rows, and scopeprof's earlier figures must stay as they were.
//            After that scopeprof's collector must report itself withheld (Kineto holds CUPTI), with host
//            and CUDA-event columns still valid, and a second torch session must still get CUDA rows.
//   overlap  a torch profiler session starts while scopeprof's collector holds CUPTI: the torch table must
//            either have CUDA rows or say they are missing and name scopeprof's collector; scopeprof's
//            figures must either be exact or be marked invalid. Never a silent partial answer.
//
// Exit status 0: pass; 1: fail; 77: skipped (no GPU, or the collector not built).
#include <scopeprof.hpp>
#include <scopeprof/torch_session.hpp>

#include <torch/torch.h>

#include <cstdio>
#include <iostream>
#include <string>

namespace {

int failures = 0;
void check(bool ok, const std::string& what) {
  std::printf("%s: %s\n", ok ? "ok  " : "FAIL", what.c_str());
  if (!ok) ++failures;
}

const scopeprof::scope_instance* first_named(const scopeprof::report& r, const std::string& name) {
  for (const auto& s : r.instances())
    if (r.sites()[s.site].name == name) return &s;
  return nullptr;
}

std::size_t device_kernels(const scopeprof::torch_profile_result& r) {
  std::size_t n = 0;
  for (const auto& e : r.events()) n += e.kind == scopeprof::torch_event_kind::kernel;
  return n;
}

struct workload {
  torch::Device dev{torch::kCUDA};
  torch::nn::Linear lin{nullptr};
  torch::Tensor x;
  workload() : lin(torch::nn::Linear(1024, 1024)) {
    lin->to(dev);
    x = torch::randn({4096, 1024}, dev);
    // Warm-up outside any scope: CUDA context, cuBLAS handle, the caching allocator.
    for (int i = 0; i < 2; ++i) (void)torch::relu(lin(x));
    torch::cuda::synchronize();
  }
  // Three relu launches: exactly three kernels, launched by this scope itself.
  void relu3() {
    PROF_SCOPE("handoff.relu3");
    for (int i = 0; i < 3; ++i) (void)torch::relu(x);
  }
  void block() {
    PROF_SCOPE("handoff.block");
    (void)torch::relu(lin(x));
  }
};

// scopeprof's figures for relu3 are exact (3 kernels, busy <= span), or the report says they are not valid.
void check_relu3_exact_or_invalid(const scopeprof::report& r, const char* when) {
  const std::string w = std::string(" (") + when + ")";
  const auto* s = first_named(r, "handoff.relu3");
  check(s != nullptr, "the relu3 scope is in the report" + w);
  if (s == nullptr) return;
  std::printf("CUPTI evidence%s: %s\n", w.c_str(), r.sources().cupti.c_str());
  if (r.sources().cupti_valid) {
    check(s->kernels == 3 && s->kernels_self == 3,
          "valid CUPTI data: relu3 has exactly its 3 kernels (has " + std::to_string(s->kernels) + ")" + w);
    check(s->device != scopeprof::device_status::ok || s->device_busy_ns <= s->device_span_ns(),
          "valid CUPTI data: busy <= span" + w);
  } else {
    check(r.activities().empty() && s->kernels == 0, "invalid CUPTI data: no CUPTI figure is reported" + w);
  }
}

int handoff(workload& w) {
  // 1. scopeprof collects.
  scopeprof::set_cupti(true);
  if (!scopeprof::cupti_enabled()) {
    std::printf("FAIL: the collector did not start in a clean process: %s\n", scopeprof::collect().sources().cupti.c_str());
    return 1;
  }
  scopeprof::reset();
  w.relu3();
  w.block();
  torch::cuda::synchronize();
  const scopeprof::report before = scopeprof::collect();
  check(before.sources().cupti_valid, "scopeprof's CUPTI data is valid before the torch session");
  check_relu3_exact_or_invalid(before, "before the session");
  const auto* blk = first_named(before, "handoff.block");
  check(blk != nullptr && blk->kernels >= 2, "the Linear + relu scope has its GEMM and relu kernels");

  // 2. scopeprof lets go; a torch profiler session runs.
  scopeprof::set_cupti(false);
  check(!scopeprof::cupti_enabled(), "set_cupti(false) stops the collector");
  {
    scopeprof::torch_profile session;
    check(session.running(), "the torch session starts after the release");
    for (int i = 0; i < 3; ++i) w.block();
    torch::cuda::synchronize();
    auto result = session.stop();
    const std::string table = result.table();
    std::cout << table << std::flush;
    check(result.cuda().requested && result.cuda().device_events, "the torch session has CUDA activity");
    check(!result.cuda().missing(), "the torch session does not call CUDA activity missing");
    check(!result.cuda().held_by_scopeprof, "the torch session did not find scopeprof holding CUPTI");
    const std::size_t kernels = device_kernels(result);
    check(kernels >= 6, "the torch session has the 3 GEMM and 3 relu kernels (" + std::to_string(kernels) + " kernels)");
    check(table.find("Self CUDA") != std::string::npos && table.find("MISSING") == std::string::npos,
          "the torch table has its CUDA columns");
  }

  // 3. scopeprof's earlier figures are unchanged (records stay until reset()).
  const scopeprof::report after = scopeprof::collect();
  check_relu3_exact_or_invalid(after, "after the session");
  check(after.sources().cupti_valid, "the figures collected before the release stay valid");
  const auto* b2 = first_named(after, "handoff.block");
  check(b2 != nullptr && blk != nullptr && b2->kernels == blk->kernels, "the block scope keeps its kernel count");

  // 4. Kineto now holds CUPTI: scopeprof's collector is withheld, and says why; other columns are valid.
  scopeprof::reset();
  scopeprof::set_cupti(true);
  check(!scopeprof::cupti_enabled(), "set_cupti(true) does not collect while the torch profiler holds CUPTI");
  w.relu3();
  torch::cuda::synchronize();
  const scopeprof::report held = scopeprof::collect();
  std::printf("CUPTI evidence (Kineto holding): %s\n", held.sources().cupti.c_str());
  check(held.sources().cupti.rfind("withheld: ", 0) == 0, "the report says the collector was withheld");
  check(held.sources().cupti.find("ran in this process") != std::string::npos, "the report names the torch session as the holder");
  check(!held.sources().cupti_valid && held.activities().empty(), "no CUPTI figures while withheld");
  const auto* r3 = first_named(held, "handoff.relu3");
  check(r3 != nullptr && r3->host_total_ns() > 0, "host time still recorded");
  check(r3 != nullptr && r3->device == scopeprof::device_status::ok && r3->device_span_ns() > 0,
        "CUDA-event device span still recorded");

  // 5. A second torch session still gets CUDA rows: scopeprof's failed attempt took nothing from Kineto.
  {
    scopeprof::torch_profile session;
    for (int i = 0; i < 2; ++i) w.block();
    torch::cuda::synchronize();
    auto result = session.stop();
    check(result.cuda().device_events && device_kernels(result) >= 4, "a second torch session still has CUDA rows");
  }
  return 0;
}

int overlap(workload& w) {
  scopeprof::set_cupti(true);
  if (!scopeprof::cupti_enabled()) {
    std::printf("FAIL: the collector did not start in a clean process: %s\n", scopeprof::collect().sources().cupti.c_str());
    return 1;
  }
  scopeprof::reset();
  scopeprof::torch_profile session;  // scopeprof still holds CUPTI
  check(session.running(), "the torch session starts (host activity at least)");
  w.relu3();
  for (int i = 0; i < 2; ++i) w.block();
  torch::cuda::synchronize();
  auto result = session.stop();
  const std::string table = result.table();
  std::cout << table << std::flush;
  check(result.cuda().held_by_scopeprof, "the session saw scopeprof's collector holding CUPTI");
  if (result.cuda().device_events) {
    check(device_kernels(result) >= 7, "torch has CUDA rows: all 7 kernels are there");
  } else {
    check(result.cuda().missing(), "torch has no CUDA rows and calls CUDA activity missing");
    check(table.find("scopeprof's own CUPTI collector") != std::string::npos &&
              table.find("scopeprof::set_cupti(false)") != std::string::npos,
          "the torch table names scopeprof's collector and the call that frees CUPTI");
    check(table.find("Self CUDA") == std::string::npos, "no CUDA columns that would read as zero");
  }
  const scopeprof::report r = scopeprof::collect();
  check_relu3_exact_or_invalid(r, "torch session overlapping");
  std::printf("outcome: torch CUDA rows %s; scopeprof CUPTI data %s\n", result.cuda().device_events ? "present" : "missing (said so)",
              r.sources().cupti_valid ? "valid (exact)" : "marked invalid");
  scopeprof::set_cupti(false);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "handoff";
  if (mode != "handoff" && mode != "overlap") {
    std::fprintf(stderr, "usage: %s handoff|overlap\n", argv[0]);
    return 2;
  }
#if !SCOPEPROF_WITH_CUPTI
  std::printf("skipped: the CUPTI collector is not built (SCOPEPROF_WITH_CUPTI=0)\n");
  return 77;
#else
  if (!torch::cuda::is_available()) {
    std::printf("skipped: torch sees no CUDA device\n");
    return 77;
  }
  try {
    torch::NoGradGuard no_grad;
    workload w;
    const int rc = mode == "handoff" ? handoff(w) : overlap(w);
    if (rc != 0) return rc;
  } catch (const std::exception& e) {
    std::printf("FAIL: exception: %s\n", e.what());
    return 1;
  }
  std::printf("%s %s\n", mode.c_str(), failures == 0 ? "PASS" : "FAILED");
  return failures == 0 ? 0 : 1;
#endif
}
