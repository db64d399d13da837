// scopeprof: build switches. Each may be set to 0 or 1 before including <scopeprof.hpp> (the CMake
// target sets them for you); set them the same way in every translation unit of a program.
//
//   SCOPEPROF_DISABLE       defined: every macro compiles to nothing, the API stays and does nothing.
//   SCOPEPROF_WITH_NVTX     NVTX ranges in the "scopeprof" domain.   Plain include: 1 if <nvtx3/nvToolsExt.h>
//                           is on the include path, else 0.
//   SCOPEPROF_WITH_CUDA     device time from CUDA events.            Plain include: 0 (needs cudart).
//   SCOPEPROF_WITH_CUPTI    CUPTI collector (needs the CUPTI headers; set_cupti(true) switches it on). Plain include: 0.
//   SCOPEPROF_WITH_TORCH    RecordFunction USER_SCOPE entries while  Plain include: 0 (needs LibTorch).
//                           a torch profiler listens.
//   SCOPEPROF_TORCH_CUDA    with SCOPEPROF_WITH_TORCH and _CUDA: a scope naming no stream is timed on torch's
//                           current CUDA stream (needs libc10_cuda).  Plain include: 0.
//   SCOPEPROF_WITH_ZLIB     gzip output (paths ending in .gz) through zlib (link -lz). Plain include: 0; the
//                           CMake target sets 1 when it finds zlib. Without <zlib.h> it is 0 whatever is set.
//
// Where the cold code (start-up, collect(), the report builder, the writers) is compiled:
//   neither macro below           header-only: everything inline, in every translation unit that includes
//                                 <scopeprof.hpp> (g++ -I single_include app.cpp just works).
//   SCOPEPROF_EXTERNAL_IMPLEMENTATION   this TU sees the hot path and declarations only; the cold code is
//                                 compiled once elsewhere: by the CMake target scopeprof::scopeprof, or by
//                                 one .cpp of your own that defines SCOPEPROF_IMPLEMENTATION.
//   SCOPEPROF_IMPLEMENTATION      define it in exactly one .cpp (before the include): that TU holds the
//                                 cold code. It wins over SCOPEPROF_EXTERNAL_IMPLEMENTATION.
// With SCOPEPROF_DISABLE every TU is header-only whatever is set: there is no cold code left to compile.
#pragma once

#include <scopeprof/version.hpp>

#if defined(SCOPEPROF_DISABLE)
#undef SCOPEPROF_WITH_NVTX
#undef SCOPEPROF_WITH_CUDA
#undef SCOPEPROF_WITH_CUPTI
#undef SCOPEPROF_WITH_TORCH
#define SCOPEPROF_WITH_NVTX 0
#define SCOPEPROF_WITH_CUDA 0
#define SCOPEPROF_WITH_CUPTI 0
#define SCOPEPROF_WITH_TORCH 0
#define SCOPEPROF_ENABLED 0
#else
#define SCOPEPROF_ENABLED 1
#endif

#ifndef SCOPEPROF_WITH_NVTX
#if defined(__has_include)
#if __has_include(<nvtx3/nvToolsExt.h>)
#define SCOPEPROF_WITH_NVTX 1
#else
#define SCOPEPROF_WITH_NVTX 0
#endif
#else
#define SCOPEPROF_WITH_NVTX 0
#endif
#endif

#ifndef SCOPEPROF_WITH_CUDA
#define SCOPEPROF_WITH_CUDA 0
#endif
#ifndef SCOPEPROF_WITH_CUPTI
#define SCOPEPROF_WITH_CUPTI 0
#endif
#ifndef SCOPEPROF_WITH_TORCH
#define SCOPEPROF_WITH_TORCH 0
#endif
// The CUPTI collector loads libcupti with dlopen: Linux only.
#if SCOPEPROF_WITH_CUPTI && !defined(__linux__)
#undef SCOPEPROF_WITH_CUPTI
#define SCOPEPROF_WITH_CUPTI 0
#endif
#if !SCOPEPROF_WITH_TORCH || !SCOPEPROF_WITH_CUDA
#undef SCOPEPROF_TORCH_CUDA
#define SCOPEPROF_TORCH_CUDA 0
#endif
#ifndef SCOPEPROF_TORCH_CUDA
#define SCOPEPROF_TORCH_CUDA 0
#endif
#ifndef SCOPEPROF_WITH_ZLIB
#define SCOPEPROF_WITH_ZLIB 0
#endif
#if SCOPEPROF_WITH_ZLIB && defined(__has_include)
#if !__has_include(<zlib.h>)
#undef SCOPEPROF_WITH_ZLIB
#define SCOPEPROF_WITH_ZLIB 0
#endif
#endif

#if defined(SCOPEPROF_DISABLE) || (!defined(SCOPEPROF_IMPLEMENTATION) && !defined(SCOPEPROF_EXTERNAL_IMPLEMENTATION))
#define SCOPEPROF_DETAIL_COMPILED 0     // header-only
#define SCOPEPROF_DETAIL_DEFINE_COLD 1  // this TU sees the cold code
#define SCOPEPROF_API inline
#elif defined(SCOPEPROF_IMPLEMENTATION)
#define SCOPEPROF_DETAIL_COMPILED 1
#define SCOPEPROF_DETAIL_DEFINE_COLD 1
#define SCOPEPROF_API
#else
#define SCOPEPROF_DETAIL_COMPILED 1
#define SCOPEPROF_DETAIL_DEFINE_COLD 0
#define SCOPEPROF_API
#endif

#if defined(__GNUC__) || defined(__clang__)
#define SCOPEPROF_LIKELY(x) __builtin_expect(!!(x), 1)
#define SCOPEPROF_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define SCOPEPROF_NOINLINE __attribute__((noinline))
#define SCOPEPROF_ALWAYS_INLINE inline __attribute__((always_inline))
#define SCOPEPROF_FUNCTION_NAME __PRETTY_FUNCTION__
#else
#define SCOPEPROF_LIKELY(x) (x)
#define SCOPEPROF_UNLIKELY(x) (x)
#define SCOPEPROF_NOINLINE __declspec(noinline)
#define SCOPEPROF_ALWAYS_INLINE __forceinline
#define SCOPEPROF_FUNCTION_NAME __FUNCSIG__
#endif

// Around cold definitions: GCC warns when a definition adds noinline to an inline declaration (the
// header-only form of an SCOPEPROF_API function), though it honours the attribute.
#if defined(__GNUC__) || defined(__clang__)
#define SCOPEPROF_DETAIL_COLD_BEGIN _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Wattributes\"")
#define SCOPEPROF_DETAIL_COLD_END _Pragma("GCC diagnostic pop")
#else
#define SCOPEPROF_DETAIL_COLD_BEGIN
#define SCOPEPROF_DETAIL_COLD_END
#endif

#define SCOPEPROF_CONCAT_IMPL(a, b) a##b
#define SCOPEPROF_CONCAT(a, b) SCOPEPROF_CONCAT_IMPL(a, b)

// Every entity lives in an inline namespace named after the version and the build switches, so translation
// units built with different switches (one with SCOPEPROF_DISABLE, one without; NVTX on in one and off in
// another) link to separate, self-consistent instances instead of one picked by link order:
// scopeprof::v0_1_0_e1n1c0p0t0x0z0m1::scope. User code keeps writing scopeprof::scope. The last letter tells
// header-only TUs (m0) from compiled-implementation ones (m1): a program that mixes them gets two separate
// instances, never one half-shared registry.
#define SCOPEPROF_ABI_NAME_IMPL(MAJ, MIN, PAT, E, N, C, P, T, X, Z, M) \
  v##MAJ##_##MIN##_##PAT##_e##E##n##N##c##C##p##P##t##T##x##X##z##Z##m##M
#define SCOPEPROF_ABI_NAME_EXPAND(MAJ, MIN, PAT, E, N, C, P, T, X, Z, M) \
  SCOPEPROF_ABI_NAME_IMPL(MAJ, MIN, PAT, E, N, C, P, T, X, Z, M)
#define SCOPEPROF_ABI_NAMESPACE                                                                                 \
  SCOPEPROF_ABI_NAME_EXPAND(SCOPEPROF_VERSION_MAJOR, SCOPEPROF_VERSION_MINOR, SCOPEPROF_VERSION_PATCH,          \
                            SCOPEPROF_ENABLED, SCOPEPROF_WITH_NVTX, SCOPEPROF_WITH_CUDA, SCOPEPROF_WITH_CUPTI,   \
                            SCOPEPROF_WITH_TORCH, SCOPEPROF_TORCH_CUDA, SCOPEPROF_WITH_ZLIB,                     \
                            SCOPEPROF_DETAIL_COMPILED)
#define SCOPEPROF_NAMESPACE_BEGIN \
  namespace scopeprof {           \
  inline namespace SCOPEPROF_ABI_NAMESPACE {
#define SCOPEPROF_NAMESPACE_END \
  }                             \
  }
