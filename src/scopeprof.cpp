// scopeprof's implementation unit: the cold code (start-up, collect(), the report builder and writers),
// compiled once for the CMake target scopeprof::scopeprof. Its users' translation units see only the hot
// path and declarations (SCOPEPROF_EXTERNAL_IMPLEMENTATION).
#define SCOPEPROF_IMPLEMENTATION
#include <scopeprof.hpp>
