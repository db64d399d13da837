// nvtx_recorder.cpp - NVTX3 injection library that records NVTX calls for
// scopeprof's tests.  See nvtx_recorder.h for the C API and how to use it.
//
// NVTX3 loads this library from $NVTX_INJECTION64_PATH at the first NVTX call
// of each NVTX instance, then calls InitializeInjectionNvtx2(), through which
// we overwrite the instance's implementation function pointers with ours.

#define NVTX_NO_IMPL  // tool side: types and callback tables only
#define NVTX_RECORDER_BUILDING_TOOL
#include <nvtx3/nvToolsExt.h>

#include "nvtx_recorder.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <cwchar>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

// The NVTX headers only declare these handle structs; a tool defines them.
struct nvtxDomainRegistration_st {
    std::string name;
};
struct nvtxStringRegistration_st {
    std::string text;
};

namespace {

using Domain = nvtxDomainRegistration_st;  // nullptr = default domain
using RegString = nvtxStringRegistration_st;

struct Attr {
    std::string message;
    int message_type = 0;
    uint32_t color = 0;
    int has_color = 0;
    uint32_t category = 0;
};

struct OpenRange {
    Attr attr;
    const Domain* domain = nullptr;
};

struct State {
    std::mutex mu;
    int loaded = 0;
    std::vector<nvtx_recorder_event> events;
    uint64_t sequence = 0;
    int unbalanced_pops = 0;
    // Handles are never freed: events and NVTX callers may still refer to them.
    std::map<std::string, Domain*> domains_by_name;
    std::map<std::string, int> domain_create_count;
    std::unordered_set<const RegString*> strings;  // valid handles
    size_t registered_string_calls = 0;
    // push/pop stacks, per (thread id, domain)
    std::map<std::pair<uint64_t, const Domain*>, std::vector<Attr>> stacks;
    // start/end ranges by id
    uint64_t next_range_id = 0;
    std::unordered_map<uint64_t, OpenRange> started;
};

// Leaked on purpose: NVTX calls may come after static destructors have run.
State& state()
{
    static State* s = new State;
    return *s;
}

uint64_t current_thread_id()
{
    thread_local const uint64_t tid = static_cast<uint64_t>(::syscall(SYS_gettid));
    return tid;
}

std::string narrow(const wchar_t* w)
{
    std::string out;
    if (!w)
        return out;
    for (; *w; ++w)
        out.push_back((*w >= 0 && *w < 0x80) ? static_cast<char>(*w) : '?');
    return out;
}

void copy_str(char* dst, size_t cap, const std::string& src)
{
    const size_t n = src.size() < cap - 1 ? src.size() : cap - 1;
    std::memcpy(dst, src.data(), n);
    dst[n] = '\0';
}

// Caller holds state().mu.
std::string resolve_registered(State& s, const RegString* h)
{
    if (h && s.strings.count(h))
        return h->text;
    return std::string();
}

// Caller holds state().mu.
Attr read_attr(State& s, const nvtxEventAttributes_t* a)
{
    Attr r;
    if (!a)
        return r;
    constexpr size_t needed = offsetof(nvtxEventAttributes_t, message) + sizeof(a->message);
    if (a->size < needed)
        return r;
    r.category = a->category;
    if (a->colorType == NVTX_COLOR_ARGB) {
        r.color = a->color;
        r.has_color = 1;
    }
    r.message_type = a->messageType;
    switch (a->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII:
        if (a->message.ascii)
            r.message = a->message.ascii;
        break;
    case NVTX_MESSAGE_TYPE_UNICODE:
        r.message = narrow(a->message.unicode);
        break;
    case NVTX_MESSAGE_TYPE_REGISTERED:
        r.message = resolve_registered(s, a->message.registered);
        break;
    default:
        break;
    }
    return r;
}

Attr ascii_attr(const char* msg)
{
    Attr r;
    r.message_type = NVTX_MESSAGE_TYPE_ASCII;
    if (msg)
        r.message = msg;
    return r;
}

Attr unicode_attr(const wchar_t* msg)
{
    Attr r;
    r.message_type = NVTX_MESSAGE_TYPE_UNICODE;
    r.message = narrow(msg);
    return r;
}

// Caller holds state().mu.
void record(State& s, int kind, const Domain* d, const Attr& a, int depth_after, uint64_t range_id)
{
    nvtx_recorder_event e;
    std::memset(&e, 0, sizeof e);
    e.kind = kind;
    copy_str(e.domain, sizeof e.domain, d ? d->name : std::string());
    copy_str(e.message, sizeof e.message, a.message);
    e.color = a.color;
    e.has_color = a.has_color;
    e.category = a.category;
    e.message_type = a.message_type;
    e.thread_id = current_thread_id();
    e.depth_after = depth_after;
    e.range_id = range_id;
    e.sequence = ++s.sequence;
    s.events.push_back(e);
}

// ---- generic operations (caller holds state().mu) ------------------------

int push_locked(State& s, const Domain* d, const Attr& a)
{
    auto& stack = s.stacks[{current_thread_id(), d}];
    stack.push_back(a);
    const int depth = static_cast<int>(stack.size());
    record(s, NVTX_RECORDER_PUSH, d, a, depth, 0);
    return depth - 1;  // NVTX: 0-based level of the range being started
}

int pop_locked(State& s, const Domain* d)
{
    auto it = s.stacks.find({current_thread_id(), d});
    if (it == s.stacks.end() || it->second.empty()) {
        ++s.unbalanced_pops;
        record(s, NVTX_RECORDER_POP, d, Attr(), -1, 0);
        return -1;  // NVTX: negative on error
    }
    const Attr a = std::move(it->second.back());
    it->second.pop_back();
    const int depth = static_cast<int>(it->second.size());
    record(s, NVTX_RECORDER_POP, d, a, depth, 0);
    return depth;  // NVTX: level of the range being ended
}

void mark_locked(State& s, const Domain* d, const Attr& a)
{
    auto it = s.stacks.find({current_thread_id(), d});
    const int depth = it == s.stacks.end() ? 0 : static_cast<int>(it->second.size());
    record(s, NVTX_RECORDER_MARK, d, a, depth, 0);
}

nvtxRangeId_t start_locked(State& s, const Domain* d, const Attr& a)
{
    const uint64_t id = ++s.next_range_id;
    s.started[id] = OpenRange{a, d};
    record(s, NVTX_RECORDER_RANGE_START, d, a, 0, id);
    return id;
}

void end_locked(State& s, nvtxRangeId_t id)
{
    auto it = s.started.find(id);
    if (it == s.started.end()) {
        record(s, NVTX_RECORDER_RANGE_END, nullptr, Attr(), 0, id);
        return;
    }
    record(s, NVTX_RECORDER_RANGE_END, it->second.domain, it->second.attr, 0, id);
    s.started.erase(it);
}

// ---- locking wrappers -------------------------------------------------------

int do_push(const Domain* d, const Attr& a)
{
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mu);
    return push_locked(s, d, a);
}

int do_push_attr(const Domain* d, const nvtxEventAttributes_t* attr)
{
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mu);
    return push_locked(s, d, read_attr(s, attr));
}

int do_pop(const Domain* d)
{
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mu);
    return pop_locked(s, d);
}

void do_mark(const Domain* d, const Attr& a)
{
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mu);
    mark_locked(s, d, a);
}

void do_mark_attr(const Domain* d, const nvtxEventAttributes_t* attr)
{
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mu);
    mark_locked(s, d, read_attr(s, attr));
}

nvtxRangeId_t do_start(const Domain* d, const Attr& a)
{
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mu);
    return start_locked(s, d, a);
}

nvtxRangeId_t do_start_attr(const Domain* d, const nvtxEventAttributes_t* attr)
{
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mu);
    return start_locked(s, d, read_attr(s, attr));
}

void do_end(nvtxRangeId_t id)
{
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mu);
    end_locked(s, id);
}

Domain* do_domain_create(std::string name)
{
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mu);
    ++s.domain_create_count[name];
    Domain*& d = s.domains_by_name[name];
    if (!d)
        d = new Domain{std::move(name)};
    return d;
}

RegString* do_register_string(std::string text)
{
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mu);
    ++s.registered_string_calls;
    RegString* h = new RegString{std::move(text)};
    s.strings.insert(h);
    return h;
}

// ---- NVTX callbacks (signatures as the *_impl_fntype typedefs) -----------

// Core module: everything goes to the default domain (nullptr).
void NVTX_API cb_MarkEx(const nvtxEventAttributes_t* a) { do_mark_attr(nullptr, a); }
void NVTX_API cb_MarkA(const char* m) { do_mark(nullptr, ascii_attr(m)); }
void NVTX_API cb_MarkW(const wchar_t* m) { do_mark(nullptr, unicode_attr(m)); }
nvtxRangeId_t NVTX_API cb_RangeStartEx(const nvtxEventAttributes_t* a) { return do_start_attr(nullptr, a); }
nvtxRangeId_t NVTX_API cb_RangeStartA(const char* m) { return do_start(nullptr, ascii_attr(m)); }
nvtxRangeId_t NVTX_API cb_RangeStartW(const wchar_t* m) { return do_start(nullptr, unicode_attr(m)); }
void NVTX_API cb_RangeEnd(nvtxRangeId_t id) { do_end(id); }
int NVTX_API cb_RangePushEx(const nvtxEventAttributes_t* a) { return do_push_attr(nullptr, a); }
int NVTX_API cb_RangePushA(const char* m) { return do_push(nullptr, ascii_attr(m)); }
int NVTX_API cb_RangePushW(const wchar_t* m) { return do_push(nullptr, unicode_attr(m)); }
int NVTX_API cb_RangePop(void) { return do_pop(nullptr); }

// Core2 module: domain based.
void NVTX_API cb_DomainMarkEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) { do_mark_attr(d, a); }
nvtxRangeId_t NVTX_API cb_DomainRangeStartEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a)
{
    return do_start_attr(d, a);
}
void NVTX_API cb_DomainRangeEnd(nvtxDomainHandle_t, nvtxRangeId_t id) { do_end(id); }
int NVTX_API cb_DomainRangePushEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a)
{
    return do_push_attr(d, a);
}
int NVTX_API cb_DomainRangePop(nvtxDomainHandle_t d) { return do_pop(d); }
nvtxStringHandle_t NVTX_API cb_DomainRegisterStringA(nvtxDomainHandle_t, const char* str)
{
    return do_register_string(str ? str : "");
}
nvtxStringHandle_t NVTX_API cb_DomainRegisterStringW(nvtxDomainHandle_t, const wchar_t* str)
{
    return do_register_string(narrow(str));
}
nvtxDomainHandle_t NVTX_API cb_DomainCreateA(const char* name) { return do_domain_create(name ? name : ""); }
nvtxDomainHandle_t NVTX_API cb_DomainCreateW(const wchar_t* name) { return do_domain_create(narrow(name)); }
void NVTX_API cb_DomainDestroy(nvtxDomainHandle_t) {}  // handle kept valid on purpose
void NVTX_API cb_Initialize(const void*) {}

template <class Fn>
void install(NvtxFunctionTable table, unsigned int size, unsigned int id, Fn fn)
{
    // table[id] points at the NVTX instance's implementation pointer.
    if (table && id < size && table[id])
        *table[id] = reinterpret_cast<NvtxFunctionPointer>(fn);
}

}  // namespace

// ---- entry point called by the NVTX loader --------------------------------

extern "C" NVTX_RECORDER_EXPORT int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t getExportTable)
{
    if (!getExportTable)
        return 0;
    const auto* callbacks =
        static_cast<const NvtxExportTableCallbacks*>(getExportTable(NVTX_ETID_CALLBACKS));
    if (!callbacks || callbacks->struct_size < sizeof(NvtxExportTableCallbacks) ||
        !callbacks->GetModuleFunctionTable)
        return 0;

    NvtxFunctionTable core = nullptr;
    unsigned int core_size = 0;
    NvtxFunctionTable core2 = nullptr;
    unsigned int core2_size = 0;
    if (!callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &core, &core_size) ||
        !callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &core2, &core2_size))
        return 0;

    install(core, core_size, NVTX_CBID_CORE_MarkEx, &cb_MarkEx);
    install(core, core_size, NVTX_CBID_CORE_MarkA, &cb_MarkA);
    install(core, core_size, NVTX_CBID_CORE_MarkW, &cb_MarkW);
    install(core, core_size, NVTX_CBID_CORE_RangeStartEx, &cb_RangeStartEx);
    install(core, core_size, NVTX_CBID_CORE_RangeStartA, &cb_RangeStartA);
    install(core, core_size, NVTX_CBID_CORE_RangeStartW, &cb_RangeStartW);
    install(core, core_size, NVTX_CBID_CORE_RangeEnd, &cb_RangeEnd);
    install(core, core_size, NVTX_CBID_CORE_RangePushEx, &cb_RangePushEx);
    install(core, core_size, NVTX_CBID_CORE_RangePushA, &cb_RangePushA);
    install(core, core_size, NVTX_CBID_CORE_RangePushW, &cb_RangePushW);
    install(core, core_size, NVTX_CBID_CORE_RangePop, &cb_RangePop);

    install(core2, core2_size, NVTX_CBID_CORE2_DomainMarkEx, &cb_DomainMarkEx);
    install(core2, core2_size, NVTX_CBID_CORE2_DomainRangeStartEx, &cb_DomainRangeStartEx);
    install(core2, core2_size, NVTX_CBID_CORE2_DomainRangeEnd, &cb_DomainRangeEnd);
    install(core2, core2_size, NVTX_CBID_CORE2_DomainRangePushEx, &cb_DomainRangePushEx);
    install(core2, core2_size, NVTX_CBID_CORE2_DomainRangePop, &cb_DomainRangePop);
    install(core2, core2_size, NVTX_CBID_CORE2_DomainRegisterStringA, &cb_DomainRegisterStringA);
    install(core2, core2_size, NVTX_CBID_CORE2_DomainRegisterStringW, &cb_DomainRegisterStringW);
    install(core2, core2_size, NVTX_CBID_CORE2_DomainCreateA, &cb_DomainCreateA);
    install(core2, core2_size, NVTX_CBID_CORE2_DomainCreateW, &cb_DomainCreateW);
    install(core2, core2_size, NVTX_CBID_CORE2_DomainDestroy, &cb_DomainDestroy);
    install(core2, core2_size, NVTX_CBID_CORE2_Initialize, &cb_Initialize);
    // Not installed (NVTX turns them into no-ops): name category / OS thread,
    // resources, CUDA / OpenCL / sync modules.

    const auto* version =
        static_cast<const NvtxExportTableVersionInfo*>(getExportTable(NVTX_ETID_VERSIONINFO));
    if (version && version->struct_size >= sizeof(NvtxExportTableVersionInfo) &&
        version->SetInjectionNvtxVersion)
        version->SetInjectionNvtxVersion(NVTX_VERSION);

    State& s = state();
    std::lock_guard<std::mutex> lock(s.mu);
    ++s.loaded;
    return 1;
}

// ---- C API for tests -------------------------------------------------------

extern "C" {

int nvtx_recorder_loaded(void)
{
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mu);
    return s.loaded;
}

size_t nvtx_recorder_event_count(void)
{
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mu);
    return s.events.size();
}

int nvtx_recorder_get_event(size_t index, nvtx_recorder_event* out)
{
    if (!out)
        return 0;
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mu);
    if (index >= s.events.size())
        return 0;
    *out = s.events[index];
    return 1;
}

void nvtx_recorder_clear(void)
{
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mu);
    s.events.clear();
    s.unbalanced_pops = 0;
}

int nvtx_recorder_unbalanced_pops(void)
{
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mu);
    return s.unbalanced_pops;
}

int nvtx_recorder_open_ranges(void)
{
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mu);
    size_t n = 0;
    for (const auto& kv : s.stacks)
        n += kv.second.size();
    return static_cast<int>(n);
}

uint64_t nvtx_recorder_thread_id(void) { return current_thread_id(); }

int nvtx_recorder_domain_create_count(const char* name)
{
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mu);
    auto it = s.domain_create_count.find(name ? name : "");
    return it == s.domain_create_count.end() ? 0 : it->second;
}

size_t nvtx_recorder_registered_string_count(void)
{
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mu);
    return s.registered_string_calls;
}

}  // extern "C"
