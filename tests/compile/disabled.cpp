// With SCOPEPROF_DISABLE every macro compiles to nothing and the API still compiles and answers.
#include <scopeprof.hpp>

#include <doctest/doctest.h>

#include <string>

namespace {
int side_effects = 0;
std::string name_with_side_effect() {
  ++side_effects;
  return "dynamic";
}
void function_with_scope() { PROF_FUNCTION(); }
}  // namespace

TEST_CASE("SCOPEPROF_DISABLE compiles every macro to nothing") {
  {
    PROF_SCOPE("a");
    PROF_SCOPE("b");
    PROF_SCOPE_DYN(name_with_side_effect());
    PROF_STEP();
    function_with_scope();
  }
  CHECK(side_effects == 0);
  scopeprof::set_enabled(true);
  scopeprof::reset();
  const scopeprof::report r = scopeprof::collect();
  CHECK(r.counts().entered == 0);
  CHECK(r.counts().recorded == 0);
  CHECK(r.instances().empty());
  CHECK(r.step_stats().marks == 0);
  CHECK(r.sources().host.find("SCOPEPROF_DISABLE") != std::string::npos);
  CHECK(r.to_string().find("no finished scopes") != std::string::npos);
  CHECK(!r.csv().empty());
  CHECK(r.json().find("\"recorded\":0") != std::string::npos);
}
