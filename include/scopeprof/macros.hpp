// scopeprof: the user-facing macros. Each has a versioned name (SCOPEPROF_V1_*) and a short alias.
// With SCOPEPROF_DISABLE they still compile, as declarations that do nothing and evaluate nothing.
//
//   PROF_SCOPE("name")        time the rest of the block; the name must be a string literal
//   PROF_SCOPE_DYN(name)      same, with a runtime name (std::string, std::string_view, const char*)
//   PROF_FUNCTION()           same, named after the enclosing function
//   PROF_SCOPE_STREAM("name", stream)   device span timed on this CUDA stream
//   PROF_SCOPE_HOST("name")   host time only: never records CUDA events
//   PROF_SCOPE_WORK("name", bytes, flops)     same, declaring the work it does (achieved GB/s, TFLOP/s)
//   PROF_SCOPE_DYN_WORK(name, bytes, flops)   same, with a runtime name
//   PROF_STEP()               step marker: ends the current step, begins the next (scopeprof::next_step())
#pragma once

#include <scopeprof/config.hpp>
#include <scopeprof/scope.hpp>

#include <string_view>

// The default stream of the translation unit that holds the scope (per-thread under nvcc's
// --default-stream per-thread), carried by its call site.
#if defined(CUDA_API_PER_THREAD_DEFAULT_STREAM)
#define SCOPEPROF_DETAIL_PER_THREAD_STREAM true
#else
#define SCOPEPROF_DETAIL_PER_THREAD_STREAM false
#endif

// A static call site and a scope object with one unique suffix; n comes from __COUNTER__, so several
// scopes may share a line.
#define SCOPEPROF_DETAIL_SITE(n, name_ptr, host_only)                                                         \
  static ::scopeprof::call_site SCOPEPROF_CONCAT(scopeprof_site_, n) {                                        \
    name_ptr, __FILE__, SCOPEPROF_FUNCTION_NAME, static_cast<unsigned>(__LINE__), host_only,                 \
        SCOPEPROF_DETAIL_PER_THREAD_STREAM                                                                    \
  }
#define SCOPEPROF_DETAIL_SCOPE(n, name_literal)                                                               \
  SCOPEPROF_DETAIL_SITE(n, name_literal, false);                                                              \
  ::scopeprof::scope SCOPEPROF_CONCAT(scopeprof_scope_, n) { SCOPEPROF_CONCAT(scopeprof_site_, n) }
#define SCOPEPROF_DETAIL_SCOPE_HOST(n, name_literal)                                                          \
  SCOPEPROF_DETAIL_SITE(n, name_literal, true);                                                               \
  ::scopeprof::scope SCOPEPROF_CONCAT(scopeprof_scope_, n) { SCOPEPROF_CONCAT(scopeprof_site_, n) }
#define SCOPEPROF_DETAIL_SCOPE_STREAM(n, name_literal, stream)                                                \
  SCOPEPROF_DETAIL_SITE(n, name_literal, false);                                                              \
  ::scopeprof::scope SCOPEPROF_CONCAT(scopeprof_scope_, n) { SCOPEPROF_CONCAT(scopeprof_site_, n), (stream) }
#define SCOPEPROF_DETAIL_SCOPE_DYN(n, name_expr)                                                              \
  SCOPEPROF_DETAIL_SITE(n, nullptr, false);                                                                          \
  ::scopeprof::scope SCOPEPROF_CONCAT(scopeprof_scope_, n) {                                                  \
    SCOPEPROF_CONCAT(scopeprof_site_, n), ::std::string_view(name_expr)                                       \
  }

// A scope that declares its work at entry (scope::declare_work: nothing when the scope records nothing).
#define SCOPEPROF_DETAIL_SCOPE_WORK(n, name_literal, bytes, flops)                                            \
  SCOPEPROF_DETAIL_SCOPE(n, name_literal);                                                                    \
  SCOPEPROF_CONCAT(scopeprof_scope_, n).declare_work(static_cast<double>(bytes), static_cast<double>(flops))
#define SCOPEPROF_DETAIL_SCOPE_DYN_WORK(n, name_expr, bytes, flops)                                           \
  SCOPEPROF_DETAIL_SCOPE_DYN(n, name_expr);                                                                   \
  SCOPEPROF_CONCAT(scopeprof_scope_, n).declare_work(static_cast<double>(bytes), static_cast<double>(flops))

#if SCOPEPROF_ENABLED
#define SCOPEPROF_V1_SCOPE(name) SCOPEPROF_DETAIL_SCOPE(__COUNTER__, "" name "")
#define SCOPEPROF_V1_SCOPE_DYN(name) SCOPEPROF_DETAIL_SCOPE_DYN(__COUNTER__, name)
#define SCOPEPROF_V1_FUNCTION() SCOPEPROF_DETAIL_SCOPE(__COUNTER__, __func__)
#define SCOPEPROF_V1_SCOPE_STREAM(name, stream) SCOPEPROF_DETAIL_SCOPE_STREAM(__COUNTER__, "" name "", stream)
#define SCOPEPROF_V1_SCOPE_HOST(name) SCOPEPROF_DETAIL_SCOPE_HOST(__COUNTER__, "" name "")
#define SCOPEPROF_V1_STEP() ::scopeprof::next_step()
#define SCOPEPROF_V1_SCOPE_WORK(name, bytes, flops) SCOPEPROF_DETAIL_SCOPE_WORK(__COUNTER__, "" name "", bytes, flops)
#define SCOPEPROF_V1_SCOPE_DYN_WORK(name, bytes, flops) SCOPEPROF_DETAIL_SCOPE_DYN_WORK(__COUNTER__, name, bytes, flops)
#else
#define SCOPEPROF_V1_SCOPE(name) static_assert(sizeof("" name "") > 0, "PROF_SCOPE takes a string literal")
#define SCOPEPROF_V1_SCOPE_DYN(name) static_assert(sizeof(::std::string_view(name)) > 0, "")
#define SCOPEPROF_V1_FUNCTION() static_assert(true, "")
#define SCOPEPROF_V1_SCOPE_STREAM(name, stream) static_assert(sizeof("" name "") > 0 && sizeof(stream) > 0, "")
#define SCOPEPROF_V1_SCOPE_HOST(name) static_assert(sizeof("" name "") > 0, "PROF_SCOPE_HOST takes a string literal")
#define SCOPEPROF_V1_STEP() static_cast<void>(0)
#define SCOPEPROF_V1_SCOPE_WORK(name, bytes, flops) \
  static_assert(sizeof("" name "") > 0 && sizeof(bytes) > 0 && sizeof(flops) > 0, "PROF_SCOPE_WORK takes a string literal")
#define SCOPEPROF_V1_SCOPE_DYN_WORK(name, bytes, flops) \
  static_assert(sizeof(::std::string_view(name)) > 0 && sizeof(bytes) > 0 && sizeof(flops) > 0, "")
#endif

#ifndef SCOPEPROF_NO_SHORT_MACROS
/// @brief Times the rest of the enclosing block: `PROF_SCOPE("forward");`
#define PROF_SCOPE(name) SCOPEPROF_V1_SCOPE(name)
/// @brief Like PROF_SCOPE, with a name known at run time: `PROF_SCOPE_DYN(layer_name);`
#define PROF_SCOPE_DYN(name) SCOPEPROF_V1_SCOPE_DYN(name)
/// @brief Times the rest of the enclosing function, named after it: `PROF_FUNCTION();`
#define PROF_FUNCTION() SCOPEPROF_V1_FUNCTION()
/// @brief Like PROF_SCOPE, device-timed on the given CUDA stream: `PROF_SCOPE_STREAM("copy", s);`
#define PROF_SCOPE_STREAM(name, stream) SCOPEPROF_V1_SCOPE_STREAM(name, stream)
/// @brief Like PROF_SCOPE, host time only (no CUDA events): `PROF_SCOPE_HOST("parse");`
#define PROF_SCOPE_HOST(name) SCOPEPROF_V1_SCOPE_HOST(name)
/// @brief Like PROF_SCOPE, declaring the block's work: `PROF_SCOPE_WORK("tail", 3.0 * bytes, flops);`
#define PROF_SCOPE_WORK(name, bytes, flops) SCOPEPROF_V1_SCOPE_WORK(name, bytes, flops)
/// @brief Like PROF_SCOPE_DYN, declaring the block's work: `PROF_SCOPE_DYN_WORK(op, bytes, flops);`
#define PROF_SCOPE_DYN_WORK(name, bytes, flops) SCOPEPROF_V1_SCOPE_DYN_WORK(name, bytes, flops)
/// @brief Step marker (scopeprof::next_step()): `for (...) { PROF_STEP(); train_one(); }`
#define PROF_STEP() SCOPEPROF_V1_STEP()
#endif
