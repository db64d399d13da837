// scopeprof: version of this header set.
#pragma once

#define SCOPEPROF_VERSION_MAJOR 0
#define SCOPEPROF_VERSION_MINOR 1
#define SCOPEPROF_VERSION_PATCH 0
#define SCOPEPROF_VERSION_STRING "0.1.0"
