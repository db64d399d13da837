// doctest's CHECK, whatever was included before. With LibTorch, <scopeprof.hpp> brings glog, whose CHECK
// replaces doctest's without a warning (both come from system headers). This suite is a unity build, so
// every test file after the first one that brings glog would run glog's CHECK: a failure aborts the whole
// run without the values, and passes go uncounted. Every test file includes this last (no include guard:
// each inclusion restores it).
#include <doctest/doctest.h>

#undef CHECK
#define CHECK(...) DOCTEST_CHECK(__VA_ARGS__)
