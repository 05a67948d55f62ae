// Cells of table rows as the viewer API encodes them (docs/api.md, "Values"): exact
// where JavaScript numbers are not (long beyond 2^53, decimals as strings), ISO 8601
// times, base64 bytes, maps as [key, value] pairs.
#pragma once

#include <cstdint>

#include "server/server_internal.h"
#include "skade/format/types.h"
#include "skade/format/value.h"

namespace arrow {
class Array;
}

namespace skade::server {

/// Row `i` of `array`, read as Iceberg type `type`. A value the array cannot give
/// as that type is null.
Json CellJson(const arrow::Array& array, int64_t i, const Type& type);

/// A primitive value of Iceberg type `type` as a cell; a value whose representation does
/// not match the type gives its text.
Json ValueJson(const Value& value, const Type& type);

/// Standard base64 with padding.
std::string Base64(std::string_view bytes);

}  // namespace skade::server
