// Self-test of the NVTX recorder tool: drives the raw NVTX3 C API and checks
// what the recorder saw.  Needs NVTX_INJECTION64_PATH=<recorder library> in
// the environment (CTest sets it); fails when the tool is not loaded.

#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <nvtx3/nvToolsExt.h>

#include "nvtx_recorder.h"

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

namespace {

// Binds the recorder API once; the first NVTX call (nvtxInitialize) is what
// makes NVTX dlopen the tool, so it must come before nvtx_recorder_bind().
const nvtx_recorder_api& recorder()
{
    static const nvtx_recorder_api api = [] {
        nvtxInitialize(nullptr);
        nvtx_recorder_api a;
        nvtx_recorder_bind(&a);
        return a;
    }();
    return api;
}

#define REQUIRE_RECORDER()                                                                  \
    do {                                                                                    \
        INFO("NVTX_INJECTION64_PATH must name the recorder library; it is not loaded");     \
        REQUIRE(recorder().handle != nullptr);                                              \
        REQUIRE(recorder().loaded() >= 1);                                                  \
    } while (0)

std::vector<nvtx_recorder_event> all_events()
{
    std::vector<nvtx_recorder_event> out(recorder().event_count());
    for (size_t i = 0; i < out.size(); ++i)
        REQUIRE(recorder().get_event(i, &out[i]) == 1);
    return out;
}

std::vector<nvtx_recorder_event> events_of_thread(uint64_t tid)
{
    std::vector<nvtx_recorder_event> out;
    for (const auto& e : all_events())
        if (e.thread_id == tid)
            out.push_back(e);
    return out;
}

nvtxEventAttributes_t make_attr()
{
    nvtxEventAttributes_t a{};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    return a;
}

nvtxEventAttributes_t registered_attr(nvtxStringHandle_t s, uint32_t argb)
{
    nvtxEventAttributes_t a = make_attr();
    a.colorType = NVTX_COLOR_ARGB;
    a.color = argb;
    a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    a.message.registered = s;
    return a;
}

nvtxEventAttributes_t ascii_attr(const char* msg)
{
    nvtxEventAttributes_t a = make_attr();
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = msg;
    return a;
}

}  // namespace

TEST_CASE("recorder tool is loaded by NVTX")
{
    REQUIRE_RECORDER();
    // Without a tool NVTX returns NULL handles; with it, real ones.
    nvtxDomainHandle_t d = nvtxDomainCreateA("selftest.load");
    CHECK(d != nullptr);
    CHECK(recorder().domain_create_count("selftest.load") == 1);
}

TEST_CASE("nested domain ranges with registered string and color")
{
    REQUIRE_RECORDER();
    recorder().clear();

    nvtxDomainHandle_t d = nvtxDomainCreateA("selftest");
    REQUIRE(d != nullptr);
    const size_t strings_before = recorder().registered_string_count();
    nvtxStringHandle_t outer_name = nvtxDomainRegisterStringA(d, "outer (registered)");
    REQUIRE(outer_name != nullptr);
    CHECK(recorder().registered_string_count() == strings_before + 1);

    const nvtxEventAttributes_t outer = registered_attr(outer_name, 0xFF112233u);
    const nvtxEventAttributes_t inner = ascii_attr("inner (ascii)");
    const nvtxEventAttributes_t mark = ascii_attr("a mark");

    CHECK(nvtxDomainRangePushEx(d, &outer) == 0);
    CHECK(nvtxDomainRangePushEx(d, &inner) == 1);
    nvtxDomainMarkEx(d, &mark);
    CHECK(nvtxDomainRangePop(d) == 1);
    CHECK(nvtxDomainRangePop(d) == 0);

    const auto ev = all_events();
    REQUIRE(ev.size() == 5);
    const uint64_t me = recorder().thread_id();

    struct Want {
        int kind;
        const char* message;
        int has_color;
        uint32_t color;
        int depth_after;
    };
    const Want want[] = {
        {NVTX_RECORDER_PUSH, "outer (registered)", 1, 0xFF112233u, 1},
        {NVTX_RECORDER_PUSH, "inner (ascii)", 0, 0, 2},
        {NVTX_RECORDER_MARK, "a mark", 0, 0, 2},
        {NVTX_RECORDER_POP, "inner (ascii)", 0, 0, 1},  // pop reports the closed range
        {NVTX_RECORDER_POP, "outer (registered)", 1, 0xFF112233u, 0},
    };
    for (size_t i = 0; i < ev.size(); ++i) {
        CAPTURE(i);
        CHECK(ev[i].kind == want[i].kind);
        CHECK(std::string(ev[i].domain) == "selftest");
        CHECK(std::string(ev[i].message) == want[i].message);
        CHECK(ev[i].has_color == want[i].has_color);
        if (want[i].has_color)
            CHECK(ev[i].color == want[i].color);
        CHECK(ev[i].depth_after == want[i].depth_after);
        CHECK(ev[i].thread_id == me);
        if (i > 0)
            CHECK(ev[i].sequence > ev[i - 1].sequence);
    }
    CHECK(ev[0].message_type == NVTX_MESSAGE_TYPE_REGISTERED);
    CHECK(ev[1].message_type == NVTX_MESSAGE_TYPE_ASCII);
    CHECK(recorder().unbalanced_pops() == 0);
    CHECK(recorder().open_ranges() == 0);
}

TEST_CASE("two threads keep separate stacks")
{
    REQUIRE_RECORDER();
    recorder().clear();

    nvtxDomainHandle_t d = nvtxDomainCreateA("selftest.threads");
    REQUIRE(d != nullptr);
    nvtxStringHandle_t names[2] = {nvtxDomainRegisterStringA(d, "thread A"),
                                   nvtxDomainRegisterStringA(d, "thread B")};
    const uint32_t colors[2] = {0xFFAA0000u, 0xFF00BB00u};
    constexpr int kIterations = 200;

    std::atomic<int> ready{0};
    uint64_t tids[2] = {0, 0};
    auto worker = [&](int w) {
        tids[w] = recorder().thread_id();
        ++ready;
        while (ready.load() < 2) {
        }  // start together so the threads interleave
        const nvtxEventAttributes_t outer = registered_attr(names[w], colors[w]);
        const std::string inner_text = w == 0 ? "A inner" : "B inner";
        const nvtxEventAttributes_t inner = ascii_attr(inner_text.c_str());
        for (int i = 0; i < kIterations; ++i) {
            nvtxDomainRangePushEx(d, &outer);
            nvtxDomainRangePushEx(d, &inner);
            nvtxDomainRangePop(d);
            nvtxDomainRangePop(d);
        }
    };
    std::thread a(worker, 0);
    std::thread b(worker, 1);
    a.join();
    b.join();

    REQUIRE(tids[0] != tids[1]);
    CHECK(recorder().event_count() == size_t(2 * 4 * kIterations));
    CHECK(recorder().unbalanced_pops() == 0);
    CHECK(recorder().open_ranges() == 0);

    const char* outer_text[2] = {"thread A", "thread B"};
    const char* inner_text[2] = {"A inner", "B inner"};
    for (int w = 0; w < 2; ++w) {
        CAPTURE(w);
        const auto ev = events_of_thread(tids[w]);
        REQUIRE(ev.size() == size_t(4 * kIterations));
        for (size_t i = 0; i < ev.size(); ++i) {
            const int kinds[4] = {NVTX_RECORDER_PUSH, NVTX_RECORDER_PUSH, NVTX_RECORDER_POP,
                                  NVTX_RECORDER_POP};
            const int depths[4] = {1, 2, 1, 0};
            const bool is_outer = (i % 4 == 0) || (i % 4 == 3);
            if (ev[i].kind != kinds[i % 4] || ev[i].depth_after != depths[i % 4] ||
                std::string(ev[i].domain) != "selftest.threads" ||
                std::string(ev[i].message) != (is_outer ? outer_text[w] : inner_text[w]) ||
                ev[i].has_color != (is_outer ? 1 : 0) || (is_outer && ev[i].color != colors[w])) {
                CAPTURE(i);
                CAPTURE(ev[i].kind);
                CAPTURE(ev[i].depth_after);
                CAPTURE(ev[i].message);
                FAIL("unexpected event");
            }
        }
    }
}

TEST_CASE("unbalanced pop is counted and clear resets it")
{
    REQUIRE_RECORDER();
    recorder().clear();
    nvtxDomainHandle_t d = nvtxDomainCreateA("selftest.unbalanced");
    REQUIRE(d != nullptr);
    CHECK(nvtxDomainRangePop(d) < 0);
    CHECK(recorder().unbalanced_pops() == 1);
    const auto ev = all_events();
    REQUIRE(ev.size() == 1);
    CHECK(ev[0].kind == NVTX_RECORDER_POP);
    CHECK(ev[0].depth_after == -1);
    recorder().clear();
    CHECK(recorder().unbalanced_pops() == 0);
    CHECK(recorder().event_count() == 0);
}

TEST_CASE("default domain: core API and NULL domain handle share one stack")
{
    REQUIRE_RECORDER();
    recorder().clear();
    CHECK(nvtxRangePushA("core push") == 0);
    const nvtxEventAttributes_t inner = ascii_attr("null-domain push");
    CHECK(nvtxDomainRangePushEx(nullptr, &inner) == 1);
    nvtxMarkA("core mark");
    CHECK(nvtxRangePop() == 1);
    CHECK(nvtxDomainRangePop(nullptr) == 0);
    const auto ev = all_events();
    REQUIRE(ev.size() == 5);
    for (const auto& e : ev)
        CHECK(std::string(e.domain).empty());
    CHECK(std::string(ev[0].message) == "core push");
    CHECK(ev[2].kind == NVTX_RECORDER_MARK);
    CHECK(ev[2].depth_after == 2);
    CHECK(std::string(ev[4].message) == "core push");
    CHECK(recorder().open_ranges() == 0);
    CHECK(recorder().unbalanced_pops() == 0);
}
