// The RON reader's value tree, shared by the parser (ron.cc) and the lowering onto
// YAML (ron_lower.cc).
#pragma once

#include <string>
#include <vector>

#include "skade/common/result.h"

namespace bifrost::ron {

// One parsed RON value, with where it starts.
struct Value {
  enum Kind { kUnit, kBool, kNumber, kString, kIdent, kList, kTuple, kStruct, kMap };
  Kind kind = kUnit;
  std::string text;           // bool, number, string, ident; the name of a struct or tuple
  std::vector<Value> keys;    // struct: field names (kIdent); map: keys
  std::vector<Value> items;   // list, tuple; struct and map: the values of `keys`
  int line = 0;
  int column = 0;
};

/// Parses RON text. Errors: kInvalidArgument `origin:line:column: what`.
skade::Result<Value> Parse(const std::string& text, const std::string& origin);

/// The value as YAML flow text, each value on its RON line (see ron.h).
/// Errors: kInvalidArgument `origin:line:column: what` for values no mapping field takes.
skade::Result<std::string> LowerToYaml(const Value& root, const std::string& origin);

}  // namespace bifrost::ron
