/*
 * nvtx_recorder.h - C API of the scopeprof NVTX recorder test tool.
 *
 * The recorder is an NVTX3 injection ("tool") library.  NVTX loads it at the
 * first NVTX call of the process when NVTX_INJECTION64_PATH holds its path.
 * It records every push / pop / mark / start / end so that tests can check
 * the NVTX traffic of scopeprof without a GPU or a profiler.
 *
 * Tests do NOT link against the recorder (that would not make NVTX use it).
 * They find the copy NVTX loaded with dlopen(path, RTLD_NOW | RTLD_NOLOAD)
 * and dlsym the functions below; nvtx_recorder_bind() does exactly that.
 * Make at least one NVTX call (e.g. nvtxInitialize(NULL)) before binding:
 * until then NVTX has not loaded the library and RTLD_NOLOAD finds nothing.
 */
#ifndef SCOPEPROF_TESTS_NVTX_RECORDER_H
#define SCOPEPROF_TESTS_NVTX_RECORDER_H

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define NVTX_RECORDER_EXPORT __attribute__((visibility("default")))
#else
#define NVTX_RECORDER_EXPORT
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Event kinds (nvtx_recorder_event.kind). */
enum {
    NVTX_RECORDER_PUSH = 0,        /* nvtx[Domain]RangePush*          */
    NVTX_RECORDER_POP = 1,         /* nvtx[Domain]RangePop            */
    NVTX_RECORDER_MARK = 2,        /* nvtx[Domain]Mark*               */
    NVTX_RECORDER_RANGE_START = 3, /* nvtx[Domain]RangeStart* (start/end ranges) */
    NVTX_RECORDER_RANGE_END = 4    /* nvtx[Domain]RangeEnd            */
};

#define NVTX_RECORDER_MESSAGE_SIZE 256
#define NVTX_RECORDER_DOMAIN_SIZE 64

typedef struct nvtx_recorder_event {
    int kind;                               /* NVTX_RECORDER_PUSH ... */
    /* Domain name; "" for the default (global, NULL-handle) domain. */
    char domain[NVTX_RECORDER_DOMAIN_SIZE];
    /* Message text, resolved: ASCII as given, wide chars narrowed (non-ASCII
     * becomes '?'), registered-string handles replaced by their text.
     * Truncated to fit, always NUL-terminated.
     * For POP and RANGE_END: the message of the range that was closed
     * ("" for an unbalanced pop). */
    char message[NVTX_RECORDER_MESSAGE_SIZE];
    uint32_t color;        /* ARGB; valid only when has_color != 0        */
    int has_color;         /* 1 when colorType was NVTX_COLOR_ARGB         */
    uint32_t category;     /* eventAttrib category (0 if none)             */
    int message_type;      /* NVTX_MESSAGE_TYPE_* as given (0 = none)      */
    uint64_t thread_id;    /* OS thread id (gettid), see nvtx_recorder_thread_id */
    /* Push/pop stack depth of (thread, domain) after the event:
     * PUSH: 1 for an outermost range; POP: 0 after closing the outermost one;
     * MARK: the current depth; -1 for a pop with no open range (unbalanced);
     * 0 for RANGE_START / RANGE_END (those are not stack based). */
    int depth_after;
    uint64_t range_id;     /* RANGE_START / RANGE_END only, else 0         */
    uint64_t sequence;     /* global order of recording, starts at 1       */
} nvtx_recorder_event;

/* Number of NVTX instances that attached to the recorder (0 = never loaded).
 * Each executable / shared object that contains the NVTX3 headers is its own
 * NVTX instance and initialises separately, so this can exceed 1. */
NVTX_RECORDER_EXPORT int nvtx_recorder_loaded(void);

/* Number of recorded events (all threads, since the last clear). */
NVTX_RECORDER_EXPORT size_t nvtx_recorder_event_count(void);

/* Copies event `index` (0-based, in recording order) to *out.
 * Returns 1 on success, 0 when index is out of range or out is NULL. */
NVTX_RECORDER_EXPORT int nvtx_recorder_get_event(size_t index, nvtx_recorder_event* out);

/* Drops recorded events and resets the unbalanced-pop counter.  Domains,
 * registered strings and ranges that are still open are kept. */
NVTX_RECORDER_EXPORT void nvtx_recorder_clear(void);

/* Pops seen while the (thread, domain) stack was empty, since the last clear. */
NVTX_RECORDER_EXPORT int nvtx_recorder_unbalanced_pops(void);

/* Push ranges currently open, summed over all threads and domains. */
NVTX_RECORDER_EXPORT int nvtx_recorder_open_ranges(void);

/* The id the recorder uses for the calling thread (matches event.thread_id). */
NVTX_RECORDER_EXPORT uint64_t nvtx_recorder_thread_id(void);

/* How many times nvtxDomainCreateA/W was called with this name (ever). */
NVTX_RECORDER_EXPORT int nvtx_recorder_domain_create_count(const char* name);

/* How many times nvtxDomainRegisterStringA/W was called (ever). */
NVTX_RECORDER_EXPORT size_t nvtx_recorder_registered_string_count(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

/* ------------------------------------------------------------------------ */
/* Binding helper for tests: locate the loaded recorder and dlsym the API.  */
/* ------------------------------------------------------------------------ */
#if !defined(NVTX_RECORDER_BUILDING_TOOL)
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

typedef struct nvtx_recorder_api {
    void* handle; /* from dlopen(RTLD_NOLOAD); NULL when the tool is not loaded */
    int (*loaded)(void);
    size_t (*event_count)(void);
    int (*get_event)(size_t, nvtx_recorder_event*);
    void (*clear)(void);
    int (*unbalanced_pops)(void);
    int (*open_ranges)(void);
    uint64_t (*thread_id)(void);
    int (*domain_create_count)(const char*);
    size_t (*registered_string_count)(void);
} nvtx_recorder_api;

/* Fills *api from the recorder that NVTX loaded from $NVTX_INJECTION64_PATH.
 * Returns 1 when the library is loaded and every symbol was found, else 0
 * (then *api is zeroed).  Call it after the process's first NVTX call.
 * The handle stays open (one extra reference); that is harmless. */
static inline int nvtx_recorder_bind(nvtx_recorder_api* api)
{
    const char* path = getenv("NVTX_INJECTION64_PATH");
    nvtx_recorder_api r;
    void* sym;
    if (!api)
        return 0;
    memset(api, 0, sizeof *api);
    memset(&r, 0, sizeof r);
    if (!path || !*path)
        return 0;
    r.handle = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
    if (!r.handle)
        return 0;
#define NVTX_RECORDER_BIND_(field, name)                                   \
    sym = dlsym(r.handle, name);                                            \
    if (!sym) {                                                             \
        dlclose(r.handle);                                                  \
        return 0;                                                           \
    }                                                                       \
    memcpy(&r.field, &sym, sizeof sym);
    NVTX_RECORDER_BIND_(loaded, "nvtx_recorder_loaded")
    NVTX_RECORDER_BIND_(event_count, "nvtx_recorder_event_count")
    NVTX_RECORDER_BIND_(get_event, "nvtx_recorder_get_event")
    NVTX_RECORDER_BIND_(clear, "nvtx_recorder_clear")
    NVTX_RECORDER_BIND_(unbalanced_pops, "nvtx_recorder_unbalanced_pops")
    NVTX_RECORDER_BIND_(open_ranges, "nvtx_recorder_open_ranges")
    NVTX_RECORDER_BIND_(thread_id, "nvtx_recorder_thread_id")
    NVTX_RECORDER_BIND_(domain_create_count, "nvtx_recorder_domain_create_count")
    NVTX_RECORDER_BIND_(registered_string_count, "nvtx_recorder_registered_string_count")
#undef NVTX_RECORDER_BIND_
    *api = r;
    return 1;
}
#endif /* !NVTX_RECORDER_BUILDING_TOOL */

#endif /* SCOPEPROF_TESTS_NVTX_RECORDER_H */
