// Compiled with nothing but the single header: g++ -std=c++17 -I single_include hello.cpp
#include <scopeprof.hpp>

#include <iostream>

int main() {
  {
    PROF_SCOPE("hello");
    PROF_SCOPE("world");
  }
  const scopeprof::report r = scopeprof::collect();
  r.print(std::cout);
  return r.counts().recorded == 2 ? 0 : 1;
}
