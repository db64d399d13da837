// Which sanitizer a test binary is built with, for checks that a sanitizer changes (timing, fork()):
// SPTEST_TSAN and SPTEST_SANITIZED (ASan or TSan) are 1 or 0.
#pragma once

#if defined(__SANITIZE_THREAD__)
#define SPTEST_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SPTEST_TSAN 1
#endif
#endif
#ifndef SPTEST_TSAN
#define SPTEST_TSAN 0
#endif

#if defined(__SANITIZE_ADDRESS__)
#define SPTEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SPTEST_ASAN 1
#endif
#endif
#ifndef SPTEST_ASAN
#define SPTEST_ASAN 0
#endif

#define SPTEST_SANITIZED (SPTEST_TSAN || SPTEST_ASAN)
