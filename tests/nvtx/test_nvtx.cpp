// NVTX ranges, checked through an injected NVTX tool (tests/support/nvtx_recorder) with no GPU:
// names, colours, nesting and balance, also when an exception unwinds through nested scopes.
#include <scopeprof.hpp>

#include <doctest/doctest.h>
#include <nvtx_recorder.h>

#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

nvtx_recorder_api& recorder() {
  static nvtx_recorder_api api = [] {
    nvtx_recorder_api a{};
    scopeprof::enabled();  // initialises scopeprof, which creates its NVTX domain: the tool loads here
    nvtx_recorder_bind(&a);
    return a;
  }();
  REQUIRE_MESSAGE(api.handle != nullptr, "the NVTX recorder tool is not loaded (NVTX_INJECTION64_PATH)");
  return api;
}

std::vector<nvtx_recorder_event> events_in_scopeprof_domain() {
  std::vector<nvtx_recorder_event> out;
  auto& api = recorder();
  for (std::size_t i = 0; i < api.event_count(); ++i) {
    nvtx_recorder_event e{};
    REQUIRE(api.get_event(i, &e) == 1);
    if (std::string(e.domain) == "scopeprof") out.push_back(e);
  }
  return out;
}

void throw_through(int levels) {
  PROF_SCOPE_DYN("level " + std::to_string(levels));
  if (levels == 0) throw std::runtime_error("deep");
  throw_through(levels - 1);
}

}  // namespace

TEST_CASE("every scope pushes and pops one range in the scopeprof domain, with its name and colour") {
  auto& api = recorder();
  CHECK(api.domain_create_count("scopeprof") == 1);
  api.clear();
  {
    PROF_SCOPE("outer");
    { PROF_SCOPE("inner"); }
    { PROF_SCOPE("inner"); }
  }
  const auto ev = events_in_scopeprof_domain();
  REQUIRE(ev.size() == 6);
  const int kinds[] = {NVTX_RECORDER_PUSH, NVTX_RECORDER_PUSH, NVTX_RECORDER_POP,
                       NVTX_RECORDER_PUSH, NVTX_RECORDER_POP,  NVTX_RECORDER_POP};
  const char* names[] = {"outer", "inner", "inner", "inner", "inner", "outer"};
  const int depth[] = {1, 2, 1, 2, 1, 0};
  for (std::size_t i = 0; i < ev.size(); ++i) {
    CAPTURE(i);
    CHECK(ev[i].kind == kinds[i]);
    CHECK(std::string(ev[i].message) == names[i]);
    CHECK(ev[i].depth_after == depth[i]);
    CHECK(ev[i].has_color == 1);
    CHECK(ev[i].message_type == NVTX_MESSAGE_TYPE_REGISTERED);
  }
  CHECK(ev[0].color == scopeprof::detail::colour_for_name("outer"));
  CHECK(ev[1].color == scopeprof::detail::colour_for_name("inner"));
  CHECK(ev[1].color == ev[3].color);
  CHECK(api.unbalanced_pops() == 0);
}

TEST_CASE("a name is registered with NVTX once per call site, not once per entry") {
  auto& api = recorder();
  const std::size_t before = api.registered_string_count();
  for (int i = 0; i < 100; ++i) {
    PROF_SCOPE("registered once");
  }
  CHECK(api.registered_string_count() == before + 1);
}

TEST_CASE("an exception unwinding through 50 nested scopes closes every range in order") {
  auto& api = recorder();
  api.clear();
  scopeprof::reset();
  CHECK_THROWS_AS(throw_through(49), std::runtime_error);
  const auto ev = events_in_scopeprof_domain();
  REQUIRE(ev.size() == 100);
  for (int i = 0; i < 50; ++i) {
    CHECK(ev[static_cast<std::size_t>(i)].kind == NVTX_RECORDER_PUSH);
    CHECK(ev[static_cast<std::size_t>(i)].depth_after == i + 1);
    CHECK(ev[static_cast<std::size_t>(50 + i)].kind == NVTX_RECORDER_POP);
    CHECK(ev[static_cast<std::size_t>(50 + i)].depth_after == 49 - i);
    // Pops close the innermost range first.
    CHECK(std::string(ev[static_cast<std::size_t>(50 + i)].message) == "level " + std::to_string(i));
  }
  CHECK(api.unbalanced_pops() == 0);
  CHECK(api.open_ranges() == 0);
  const scopeprof::report r = scopeprof::collect();
  CHECK(r.counts().recorded == 50);
  CHECK(r.counts().in_flight == 0);
  REQUIRE(r.tree().size() == 50);
  for (std::size_t i = 0; i < 50; ++i) CHECK(r.tree()[i].depth == i);
}

TEST_CASE("ranges on several threads stay balanced per thread") {
  auto& api = recorder();
  api.clear();
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([] {
      for (int i = 0; i < 1000; ++i) {
        PROF_SCOPE("threaded outer");
        PROF_SCOPE("threaded inner");
      }
    });
  for (auto& t : threads) t.join();
  const auto ev = events_in_scopeprof_domain();
  CHECK(ev.size() == 4u * 1000u * 4u);
  CHECK(api.unbalanced_pops() == 0);
  CHECK(api.open_ranges() == 0);
}
