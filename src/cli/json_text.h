// JSON text on its way to Arrow's JSON-lines parser. Lines nested too deep are refused
// first, and a document holding one array of rows is turned into lines. JSON has no NaN or
// infinities, so `scan --format jsonl` (and skade serve) write them as the strings "NaN",
// "Infinity" and "-Infinity", which become floats where the table has floats; a number too
// large for its float would silently become an infinity, so it is refused. Arrow's parser
// reads a JSON object only as a struct of fixed fields, so a map's object is handed to it
// as a list of key/value entries, which it can type.
#pragma once

#include <memory>
#include <string_view>

namespace arrow::io {
class InputStream;
}

namespace skade {
class Schema;
}

namespace skade::cli {

/// `in` as JSON lines: a document whose first character (after white space) is `[` one
/// element per line (text after the array, or an array not closed, fails the read), any
/// other text as it is. A line nested deeper than kMaxJsonDepth fails the read ("line 3 is
/// nested deeper than 128 levels", lines of `in`) before any of it is handed on.
std::shared_ptr<arrow::io::InputStream> JsonRowsStream(std::shared_ptr<arrow::io::InputStream> in);

/// Whether `s` spells a non-finite float as skade writes it in JSON ("NaN", "Infinity",
/// "-Infinity").
bool IsNonFiniteWord(std::string_view s);

/// `in` as it passes by, following the table's schema: where it puts a float or double (a
/// column, a list element, a map value, a struct field, at any depth), the strings "NaN",
/// "Infinity" and "-Infinity" become the bare words Arrow's JSON parser reads as such floats,
/// and a number too large for the type fails the read ("column 'f' row 2: a number too large
/// for type float (1e39)"; rows count the top-level objects). Where it puts a map, an object
/// {"k": v, ...} becomes [{"key": "k", "value": v}, ...]. A row's or a struct's object that
/// leaves out a field with a write-default gets it (`"f": default`, before its closing brace),
/// as a column missing from other inputs does. Everything else passes unchanged: keys, other
/// fields, strings that say anything else. `in` itself when no field is a float or a map and
/// none has a write-default.
std::shared_ptr<arrow::io::InputStream> TypedJsonStream(std::shared_ptr<arrow::io::InputStream> in,
                                                        const Schema& schema);

}  // namespace skade::cli
