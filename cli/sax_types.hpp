// scopeprof tool: the type names nlohmann/json's SAX interface asks of every handler (json::sax_parse).
#pragma once

#include <nlohmann/json.hpp>

namespace scopeprof_cli {

/// A base for the tool's SAX handlers: the value types their callbacks take.
struct sax_types {
  using number_integer_t = nlohmann::json::number_integer_t;
  using number_unsigned_t = nlohmann::json::number_unsigned_t;
  using number_float_t = nlohmann::json::number_float_t;
  using string_t = nlohmann::json::string_t;
  using binary_t = nlohmann::json::binary_t;
};

}  // namespace scopeprof_cli
