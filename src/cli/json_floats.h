// JSON-lines input for float and double columns: JSON has no NaN or infinities, so
// `scan --format jsonl` (and skade serve) write them as the strings "NaN", "Infinity" and
// "-Infinity"; and a JSON number too large for the column would silently become an infinity.
#pragma once

#include <map>
#include <memory>
#include <string>

namespace arrow::io {
class InputStream;
}

namespace skade {
class Schema;
}

namespace skade::cli {

/// Bits (32 or 64) of the floats under each top-level column whose values are floats or
/// doubles, also as list elements (at any depth) or map values; other columns are absent.
std::map<std::string, int> FloatColumns(const Schema& schema);

/// `in` as it passes by: in the values of `columns` (FloatColumns), the strings "NaN",
/// "Infinity" and "-Infinity" become the bare words Arrow's JSON parser reads as such
/// floats, and a number too large for its column's floats fails the read ("column 'f' row
/// 2: a number too large for type float (1e39)"; rows count the top-level objects).
/// Everything else passes unchanged: keys, other columns, strings that say anything else.
std::shared_ptr<arrow::io::InputStream> FloatTextStream(std::shared_ptr<arrow::io::InputStream> in,
                                                        std::map<std::string, int> columns);

}  // namespace skade::cli
