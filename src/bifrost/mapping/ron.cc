// A strict recursive-descent RON reader (no RON library is packaged for C++ here), and
// ToYamlText on it; the lowering is ron_lower.cc, the writer ron_write.cc.
#include "bifrost/mapping/ron.h"

#include <cstdint>
#include <set>

#include "bifrost/mapping/ron_internal.h"
#include "skade/common/utf8.h"

namespace bifrost::ron {
namespace {

bool IsIdentStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool IsIdentChar(char c) { return IsIdentStart(c) || (c >= '0' && c <= '9'); }
int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Length of the valid UTF-8 sequence at `p`, 0 when it is not one.
size_t Utf8Length(std::string_view s, size_t p) {
  auto b = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  unsigned char c = b(p);
  if (c < 0x80) return 1;
  size_t n = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 && c < 0xE0 ? 2 : 0;
  if (n == 0 || p + n > s.size()) return 0;
  for (size_t i = 1; i < n; ++i)
    if ((b(p + i) & 0xC0) != 0x80) return 0;
  uint32_t cp = n == 2 ? c & 0x1F : n == 3 ? c & 0x0F : c & 0x07;
  for (size_t i = 1; i < n; ++i) cp = (cp << 6) | (b(p + i) & 0x3F);
  if ((n == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
    return 0;
  return n;
}

class Parser {
 public:
  Parser(std::string_view text, const std::string& origin) : s_(text), origin_(origin) {}

  Result<Value> Document() {
    for (size_t p = 0; p < s_.size();) {
      size_t n = Utf8Length(s_, p);
      if (n == 0) {
        Seek(p);
        Fail("not valid UTF-8");
        return Error();
      }
      p += n;
    }
    Seek(0);
    if (!Space()) return Error();
    while (Peek() == '#') {
      if (!Extension()) return Error();
      if (!Space()) return Error();
    }
    Value v;
    if (!ParseValue(v, 1) || !Space()) return Error();
    if (p_ < s_.size()) {
      Fail("unexpected " + Found() + " after the mapping's value");
      return Error();
    }
    return v;
  }

 private:
  char Peek(size_t ahead = 0) const { return p_ + ahead < s_.size() ? s_[p_ + ahead] : '\0'; }
  bool AtEnd() const { return p_ >= s_.size(); }
  void Advance() {
    if (s_[p_] == '\n') {
      ++line_;
      line_start_ = p_ + 1;
    }
    ++p_;
  }
  void Seek(size_t to) {
    p_ = 0, line_ = 1, line_start_ = 0;
    while (p_ < to) Advance();
  }
  int Column() const { return static_cast<int>(p_ - line_start_) + 1; }
  std::string Found() const {
    if (AtEnd()) return "end of file";
    char c = s_[p_];
    if (static_cast<unsigned char>(c) < 0x20) return "a control character";
    if (IsIdentStart(c)) {
      size_t e = p_;
      while (e < s_.size() && IsIdentChar(s_[e])) ++e;
      return "'" + std::string(s_.substr(p_, e - p_)) + "'";
    }
    size_t n = Utf8Length(s_, p_);
    return "'" + std::string(s_.substr(p_, n ? n : 1)) + "'";
  }
  bool Fail(const std::string& what) {
    if (error_.empty())
      error_ = origin_ + ":" + std::to_string(line_) + ":" + std::to_string(Column()) + ": " + what;
    return false;
  }
  std::unexpected<skade::Error> Error() const { return skade::InvalidArgument(error_); }

  // Whitespace and comments (`// line`, `/* block */`, which nest).
  bool Space() {
    while (!AtEnd()) {
      char c = Peek();
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
        Advance();
      } else if (c == '/' && Peek(1) == '/') {
        while (!AtEnd() && Peek() != '\n') Advance();
      } else if (c == '/' && Peek(1) == '*') {
        int line = line_, column = Column(), depth = 0;
        do {
          if (AtEnd()) {
            error_ = origin_ + ":" + std::to_string(line) + ":" + std::to_string(column) +
                     ": comment not closed (a '*/' is missing)";
            return false;
          }
          if (Peek() == '/' && Peek(1) == '*') {
            ++depth;
            Advance();
          } else if (Peek() == '*' && Peek(1) == '/') {
            --depth;
            Advance();
          }
          Advance();
        } while (depth > 0);
      } else {
        return true;
      }
    }
    return true;
  }

  bool Expect(char c, const std::string& context) {
    if (!Space()) return false;
    if (Peek() != c) return Fail("expected '" + std::string(1, c) + "' " + context + ", found " + Found());
    Advance();
    return true;
  }

  // `#![enable(implicit_some, ...)]`: the extensions change nothing this reader needs.
  bool Extension() {
    static const std::set<std::string> kKnown = {"implicit_some", "unwrap_newtypes",
                                                 "unwrap_variant_newtypes", "explicit_struct_names"};
    for (char c : std::string_view("#![")) {
      if (Peek() != c) return Fail("expected '#![enable(...)]', found " + Found());
      Advance();
    }
    std::string name;
    if (!Ident(name) || name != "enable") return Fail("expected 'enable' in '#![...]'");
    if (!Expect('(', "after 'enable'")) return false;
    while (true) {
      if (!Space()) return false;
      if (Peek() == ')') break;
      std::string ext;
      if (!Ident(ext)) return Fail("expected an extension name, found " + Found());
      if (!kKnown.contains(ext)) return Fail("unknown RON extension '" + ext + "'");
      if (!Space()) return false;
      if (Peek() == ',') {
        Advance();
        continue;
      }
      if (Peek() != ')') return Fail("expected ',' or ')' in 'enable(...)', found " + Found());
    }
    Advance();
    return Expect(']', "closing '#![enable(...)'");
  }

  // An identifier, `r#raw` ones included; false (no error) when there is none.
  bool Ident(std::string& out) {
    if (Peek() == 'r' && Peek(1) == '#' && IsIdentStart(Peek(2))) {
      Advance();
      Advance();
    } else if (!IsIdentStart(Peek())) {
      return false;
    }
    while (!AtEnd() && IsIdentChar(Peek())) {
      out += Peek();
      Advance();
    }
    return true;
  }

  bool ParseValue(Value& v, int depth) {
    if (!Space()) return false;
    v.line = line_;
    v.column = Column();
    char c = Peek();
    if (AtEnd()) return Fail("expected a value, found end of file");
    if (c == '[' || c == '{' || c == '(') {
      if (depth > MappingSpec::kMaxDepth)
        return Fail("nested deeper than " + std::to_string(MappingSpec::kMaxDepth) +
                    " levels (the limit of a mapping file)");
      if (c == '[') return List(v, depth);
      if (c == '{') return Map(v, depth);
      return Parens(v, depth);
    }
    if (c == '"' || (c == 'r' && (Peek(1) == '"' || (Peek(1) == '#' && !IsIdentStart(Peek(2))))))
      return String(v);
    if (c == '\'') return Char(v);
    if ((c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.') return Number(v);
    if (c == 'b' && (Peek(1) == '"' || Peek(1) == '\''))
      return Fail("byte strings have no place in a mapping file");
    std::string name;
    if (!Ident(name)) return Fail("expected a value, found " + Found());
    if (name == "true" || name == "false") {
      v.kind = Value::kBool;
      v.text = name;
      return true;
    }
    if (name == "inf" || name == "NaN") {
      v.kind = Value::kNumber;
      v.text = name;
      return true;
    }
    if (!Space()) return false;
    if (Peek() == '(') {
      if (depth > MappingSpec::kMaxDepth)
        return Fail("nested deeper than " + std::to_string(MappingSpec::kMaxDepth) +
                    " levels (the limit of a mapping file)");
      if (!Parens(v, depth)) return false;
      v.text = name;
      return true;
    }
    v.kind = Value::kIdent;
    v.text = name;
    return true;
  }

  // After a value in a list, tuple, struct or map: ',' (then maybe the close) or the close.
  bool Separator(char close, const std::string& what, bool& done) {
    if (!Space()) return false;
    if (Peek() == ',') {
      Advance();
      if (!Space()) return false;
    } else if (Peek() != close) {
      return Fail("expected ',' or '" + std::string(1, close) + "' after " + what + ", found " + Found());
    }
    done = Peek() == close;
    if (done) Advance();
    return true;
  }

  // Steps over an opening bracket; `done` when `close` follows at once (stepped over too).
  bool Open(char close, bool& done) {
    Advance();
    if (!Space()) return false;
    done = Peek() == close;
    if (done) Advance();
    return true;
  }

  bool List(Value& v, int depth) {
    v.kind = Value::kList;
    bool done = false;
    if (!Open(']', done)) return false;
    while (!done) {
      v.items.emplace_back();
      if (!ParseValue(v.items.back(), depth + 1) || !Separator(']', "a list item", done)) return false;
    }
    return true;
  }

  bool Map(Value& v, int depth) {
    v.kind = Value::kMap;
    bool done = false;
    if (!Open('}', done)) return false;
    while (!done) {
      v.keys.emplace_back();
      v.items.emplace_back();
      if (!ParseValue(v.keys.back(), depth + 1) || !Expect(':', "after a map key") ||
          !ParseValue(v.items.back(), depth + 1) || !Separator('}', "a map entry", done))
        return false;
    }
    return true;
  }

  // `(...)`: unit `()`, a struct `(field: value, ...)` or a tuple `(value, ...)`.
  bool Parens(Value& v, int depth) {
    bool unit = false;
    if (!Open(')', unit)) return false;
    if (unit) {
      v.kind = Value::kUnit;
      return true;
    }
    // A struct starts with `name:` (and not `name::`, which no RON value has either).
    size_t save = p_;
    int save_line = line_;
    size_t save_start = line_start_;
    std::string probe;
    bool is_struct = false;
    if (Ident(probe)) {
      if (!Space()) return false;
      is_struct = Peek() == ':';
    }
    p_ = save, line_ = save_line, line_start_ = save_start;
    if (!is_struct) {
      v.kind = Value::kTuple;
      for (bool done = false; !done;) {
        v.items.emplace_back();
        if (!ParseValue(v.items.back(), depth + 1) || !Separator(')', "a tuple item", done))
          return false;
      }
      return true;
    }
    v.kind = Value::kStruct;
    std::set<std::string> seen;
    for (bool done = false; !done;) {
      Value key;
      key.kind = Value::kIdent;
      key.line = line_;
      key.column = Column();
      size_t key_at = p_;
      if (!Ident(key.text)) return Fail("expected a field name, found " + Found());
      if (!seen.insert(key.text).second) {
        Seek(key_at);
        return Fail("field '" + key.text + "' is given twice");
      }
      v.keys.push_back(std::move(key));
      v.items.emplace_back();
      if (!Expect(':', "after field '" + v.keys.back().text + "'") ||
          !ParseValue(v.items.back(), depth + 1) ||
          !Separator(')', "field '" + v.keys.back().text + "'", done))
        return false;
      if (!done && !Space()) return false;
    }
    return true;
  }

  // The escape after a backslash, appended to `out`.
  bool Escape(std::string& out) {
    size_t at = p_;
    auto bad = [&](const std::string& what) {  // reported at the backslash
      Seek(at);
      return Fail(what);
    };
    Advance();  // the backslash
    char e = Peek();
    if (AtEnd()) return bad("string not closed");
    Advance();
    switch (e) {
      case '"': out += '"'; return true;
      case '\'': out += '\''; return true;
      case '\\': out += '\\'; return true;
      case '/': out += '/'; return true;
      case 'n': out += '\n'; return true;
      case 'r': out += '\r'; return true;
      case 't': out += '\t'; return true;
      case 'b': out += '\b'; return true;
      case 'f': out += '\f'; return true;
      case '0': return bad("a NUL character has no place in a mapping file");
      case '\n':  // a line continuation: the newline and the next line's indentation go
        while (Peek() == ' ' || Peek() == '\t') Advance();
        return true;
      case 'x': {
        int hi = HexDigit(Peek()), lo = HexDigit(Peek(1));
        if (hi < 0 || lo < 0 || hi > 7) return bad("'\\x' needs two hex digits up to 7F");
        if (hi == 0 && lo == 0) return bad("a NUL character has no place in a mapping file");
        Advance();
        Advance();
        out += static_cast<char>(hi * 16 + lo);
        return true;
      }
      case 'u': {
        bool braced = Peek() == '{';
        if (braced) Advance();
        uint32_t cp = 0;
        int digits = 0;
        for (; HexDigit(Peek()) >= 0 && digits < (braced ? 6 : 4); ++digits) {
          cp = cp * 16 + HexDigit(Peek());
          Advance();
        }
        if (braced && Peek() == '}' && digits > 0)
          Advance();
        else if (braced || digits != 4)
          return bad(braced ? "'\\u{...}' needs 1 to 6 hex digits and a '}'" : "'\\u' needs 4 hex digits");
        if (cp == 0 || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
          return bad("'\\u' names no character a mapping file can hold");
        skade::AppendUtf8(out, cp);
        return true;
      }
      default:
        return bad("unknown escape '\\" + std::string(1, e) + "'");
    }
  }

  bool StringChar(std::string& out) {
    unsigned char c = static_cast<unsigned char>(Peek());
    if (c < 0x20 && c != '\n' && c != '\t' && c != '\r')
      return Fail("a control character in a string (write it as an escape)");
    size_t n = Utf8Length(s_, p_);
    out.append(s_.substr(p_, n));
    for (size_t i = 0; i < n; ++i) Advance();
    return true;
  }

  bool String(Value& v) {
    v.kind = Value::kString;
    if (Peek() == 'r') {  // r"..." or r#"..."#: no escapes, closed by '"' and as many '#'
      Advance();
      size_t hashes = 0;
      while (Peek() == '#') {
        ++hashes;
        Advance();
      }
      if (Peek() != '"') return Fail("expected '\"' to open a raw string, found " + Found());
      Advance();
      std::string close = "\"" + std::string(hashes, '#');
      while (s_.substr(p_, close.size()) != close) {
        if (AtEnd()) return Fail("raw string not closed (a '" + close + "' is missing)");
        if (!StringChar(v.text)) return false;
      }
      for (size_t i = 0; i < close.size(); ++i) Advance();
      return true;
    }
    int line = line_, column = Column();
    Advance();
    while (Peek() != '"') {
      if (AtEnd()) {
        error_ = origin_ + ":" + std::to_string(line) + ":" + std::to_string(column) +
                 ": string not closed (a '\"' is missing)";
        return false;
      }
      if (Peek() == '\\' ? !Escape(v.text) : !StringChar(v.text)) return false;
    }
    Advance();
    return true;
  }

  bool Char(Value& v) {
    v.kind = Value::kString;
    Advance();
    if (Peek() == '\\' ? !Escape(v.text) : (AtEnd() || Peek() == '\'') ? Fail("empty character literal")
                                                                       : !StringChar(v.text))
      return false;
    if (Peek() != '\'') return Fail("a character literal holds one character (use \"...\" for text)");
    Advance();
    return true;
  }

  bool Number(Value& v) {
    v.kind = Value::kNumber;
    size_t start = p_;
    if (Peek() == '+' || Peek() == '-') Advance();
    auto digits = [&](int base) {
      size_t from = p_;
      while (!AtEnd() && (Peek() == '_' || (HexDigit(Peek()) >= 0 && HexDigit(Peek()) < base))) Advance();
      return p_ > from;
    };
    if (Peek() == '0' && (Peek(1) == 'x' || Peek(1) == 'b' || Peek(1) == 'o')) {
      int base = Peek(1) == 'x' ? 16 : Peek(1) == 'b' ? 2 : 8;
      Advance();
      Advance();
      if (!digits(base)) return Fail("expected digits after the number's base prefix");
    } else if (IsIdentStart(Peek())) {  // -inf, +NaN
      std::string word;
      Ident(word);
      if (word != "inf" && word != "NaN") return Fail("expected a number, found '" + word + "'");
    } else {
      bool whole = digits(10);
      bool fraction = false;
      if (Peek() == '.' && HexDigit(Peek(1)) >= 0 && HexDigit(Peek(1)) < 10) {
        Advance();
        fraction = digits(10);
      } else if (Peek() == '.' && whole) {
        Advance();
      }
      if (!whole && !fraction) return Fail("expected a number, found " + Found());
      if (Peek() == 'e' || Peek() == 'E') {
        Advance();
        if (Peek() == '+' || Peek() == '-') Advance();
        if (!digits(10)) return Fail("expected the exponent's digits");
      }
    }
    if (IsIdentChar(Peek())) return Fail("unexpected " + Found() + " in a number");
    v.text = std::string(s_.substr(start, p_ - start));
    return true;
  }

  std::string_view s_;
  std::string origin_;
  size_t p_ = 0;
  int line_ = 1;
  size_t line_start_ = 0;
  std::string error_;
};

}  // namespace

Result<Value> Parse(const std::string& text, const std::string& origin) {
  return Parser(text, origin).Document();
}

Result<std::string> ToYamlText(const std::string& text, const std::string& origin) {
  SKADE_ASSIGN_OR_RETURN(Value root, Parse(text, origin));
  return LowerToYaml(root, origin);
}

}  // namespace bifrost::ron
