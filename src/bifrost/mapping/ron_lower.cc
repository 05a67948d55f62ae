// RON values lowered onto YAML text line for line, with the seed dialect's spellings
// (enum variants, Some/None, the structured filter) turned into this model's.
#include "bifrost/mapping/ron.h"
#include "bifrost/mapping/ron_internal.h"

namespace bifrost::ron {
namespace {

// `FkEdges` → `fk_edges`, `Cdc` → `cdc`: a RON enum variant as the YAML word.
std::string SnakeCase(std::string_view name) {
  std::string out;
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    if (c >= 'A' && c <= 'Z') {
      if (i > 0 && name[i - 1] != '_') out += '_';
      out += static_cast<char>(c - 'A' + 'a');
    } else {
      out += c;
    }
  }
  return out;
}

std::string DoubleQuoted(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7f) {
      static const char* kHex = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

// What the value under a key is, for the few places RON's enums and options differ
// from YAML's plain words.
enum class Slot { kAny, kStep, kMode, kFilter };

Slot SlotOf(std::string_view key) {
  return key == "mode" ? Slot::kMode : key == "filter" ? Slot::kFilter : Slot::kAny;
}

class Lowering {
 public:
  explicit Lowering(const std::string& origin) : origin_(origin) {}

  Result<std::string> Run(const Value& root) {
    if (!Emit(root, Slot::kAny)) return skade::InvalidArgument(error_);
    return out_ + "\n";
  }

 private:
  bool Fail(const Value& at, const std::string& what) {
    error_ = origin_ + ":" + std::to_string(at.line) + ":" + std::to_string(at.column) + ": " + what;
    return false;
  }
  // Moves the output to the value's line, so YAML's marks are RON's line numbers.
  void At(const Value& v) {
    while (line_ < v.line) {
      out_ += "\n ";
      ++line_;
    }
  }
  // Some(x) is x; None is no value (its field is left out).
  static const Value& Unwrap(const Value& v) {
    if (v.kind == Value::kTuple && v.text == "Some" && v.items.size() == 1) return Unwrap(v.items[0]);
    return v;
  }
  static bool IsNone(const Value& v) { return v.kind == Value::kIdent && v.text == "None"; }

  bool Emit(const Value& raw, Slot slot) {
    const Value& v = Unwrap(raw);
    At(v);
    switch (v.kind) {
      case Value::kUnit:
        out_ += "null";
        return true;
      case Value::kBool:
      case Value::kNumber:
        out_ += v.text;
        return true;
      case Value::kString:
        out_ += DoubleQuoted(v.text);
        return true;
      case Value::kIdent:
        if (IsNone(v)) {
          out_ += "null";
          return true;
        }
        if (slot == Slot::kMode) {
          out_ += DoubleQuoted(SnakeCase(v.text));
          return true;
        }
        return Fail(v, "'" + v.text + "' is a bare name: write text in quotes (\"" + v.text + "\")");
      case Value::kList:
        out_ += "[";
        for (size_t i = 0; i < v.items.size(); ++i) {
          if (i) out_ += ", ";
          if (!Emit(v.items[i], slot == Slot::kStep ? Slot::kStep : Slot::kAny)) return false;
        }
        out_ += "]";
        return true;
      case Value::kMap:
        out_ += "{";
        for (size_t i = 0; i < v.keys.size(); ++i) {
          if (i) out_ += ", ";
          if (!Emit(v.keys[i], Slot::kAny)) return false;
          out_ += ": ";
          if (!Emit(v.items[i], Slot::kAny)) return false;
        }
        out_ += "}";
        return true;
      case Value::kTuple:
        if (!v.text.empty() && slot == Slot::kStep && v.items.size() == 1)
          return Variant(v, v.items[0]);
        if (!v.text.empty())
          return Fail(v, "'" + v.text + "(...)' is not a value a mapping field takes");
        out_ += "[";
        for (size_t i = 0; i < v.items.size(); ++i) {
          if (i) out_ += ", ";
          if (!Emit(v.items[i], Slot::kAny)) return false;
        }
        out_ += "]";
        return true;
      case Value::kStruct:
        if (slot == Slot::kFilter) return Filter(v);
        if (!v.text.empty() && slot == Slot::kStep) return Variant(v, v);
        return Fields(v);
    }
    return false;
  }

  // A pipeline step written as an enum variant: `Vertex(label: ..)` is `{vertex: {label: ..}}`.
  bool Variant(const Value& named, const Value& body) {
    out_ += "{" + DoubleQuoted(SnakeCase(named.text)) + ": ";
    if (body.kind == Value::kStruct && &body == &named) {
      if (!Fields(body)) return false;
    } else if (!Emit(body, Slot::kAny)) {
      return false;
    }
    out_ += "}";
    return true;
  }

  bool Fields(const Value& v) {
    out_ += "{";
    bool first = true;
    for (size_t i = 0; i < v.keys.size(); ++i) {
      if (IsNone(v.items[i])) continue;
      if (!first) out_ += ", ";
      first = false;
      At(v.keys[i]);
      out_ += DoubleQuoted(v.keys[i].text) + ": ";
      const std::string& key = v.keys[i].text;
      const Value& item = Unwrap(v.items[i]);
      // A custom step's `output` holds steps too.
      bool steps = (key == "pipeline" || key == "output") && item.kind == Value::kList;
      Slot slot = steps ? Slot::kStep : SlotOf(key);
      if (!Emit(v.items[i], slot)) return false;
    }
    out_ += "}";
    return true;
  }

  // The seed's structured filter `(column: c, eq: v | in: [..] | ge: v, le: v)` as
  // the filter expression it means.
  bool Filter(const Value& v) {
    std::string column, expr;
    for (size_t i = 0; i < v.keys.size(); ++i) {
      const Value& item = Unwrap(v.items[i]);
      const std::string& key = v.keys[i].text;
      if (key == "column") {
        if (item.kind != Value::kString || item.text.empty())
          return Fail(item, "the filter's 'column' must be a column name in quotes");
        column = "\"" + Doubled(item.text, '"') + "\"";
      }
    }
    if (column.empty()) return Fail(v, "a structured filter needs 'column' (or write the filter as text)");
    for (size_t i = 0; i < v.keys.size(); ++i) {
      const std::string& key = v.keys[i].text;
      const Value& item = Unwrap(v.items[i]);
      if (key == "column" || IsNone(v.items[i])) continue;
      std::string part;
      if (key == "eq" || key == "ge" || key == "le") {
        std::string lit;
        if (!Literal(item, lit)) return false;
        part = column + (key == "eq" ? " = " : key == "ge" ? " >= " : " <= ") + lit;
      } else if (key == "in") {
        if (item.kind != Value::kList || item.items.empty())
          return Fail(item, "the filter's 'in' must be a list of values");
        part = column + " in (";
        for (size_t j = 0; j < item.items.size(); ++j) {
          std::string lit;
          if (!Literal(Unwrap(item.items[j]), lit)) return false;
          part += (j ? ", " : "") + lit;
        }
        part += ")";
      } else {
        return Fail(v.keys[i], "unknown key '" + key + "' in the filter (allowed: column, eq, in, ge, le)");
      }
      expr += (expr.empty() ? "" : " and ") + part;
    }
    if (expr.empty()) return Fail(v, "the filter needs one of 'eq', 'in', 'ge', 'le'");
    out_ += DoubleQuoted(expr);
    return true;
  }

  static std::string Doubled(std::string_view s, char quote) {
    std::string out;
    for (char c : s) {
      out += c;
      if (c == quote) out += c;
    }
    return out;
  }

  bool Literal(const Value& v, std::string& out) {
    if (v.kind == Value::kString) {
      out = "'" + Doubled(v.text, '\'') + "'";
      return true;
    }
    if ((v.kind == Value::kNumber && v.text.find_first_of("xXbon_") == std::string::npos) ||
        v.kind == Value::kBool) {
      out = v.text;
      return true;
    }
    return Fail(v, "a filter value must be text in quotes, a decimal number, true or false");
  }

  std::string origin_;
  std::string out_;
  int line_ = 1;
  std::string error_;
};

}  // namespace

Result<std::string> LowerToYaml(const Value& root, const std::string& origin) {
  return Lowering(origin).Run(root);
}

}  // namespace bifrost::ron
