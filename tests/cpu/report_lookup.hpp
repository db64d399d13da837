// Look-ups the CPU tests share: a flat row by name, and a substring test. One definition here, so the
// suite's files can also be compiled together (the suites are unity builds).
#pragma once

#include <scopeprof.hpp>

#include <doctest/doctest.h>

#include <string>

namespace sptest {

/// The flat row named `name`, or nullptr.
inline const scopeprof::flat_row* flat(const scopeprof::report& r, const std::string& name) {
  return r.find(name);
}

/// The flat row named `name`; the test stops when there is none.
inline const scopeprof::flat_row& row(const scopeprof::report& r, const std::string& name) {
  const scopeprof::flat_row* f = r.find(name);
  REQUIRE_MESSAGE(f != nullptr, "no flat row named " << name);
  return *f;
}

inline bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace sptest
