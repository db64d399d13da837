// The program's one implementation unit: the cold code, compiled here once.
#define SCOPEPROF_IMPLEMENTATION
#include <scopeprof.hpp>
