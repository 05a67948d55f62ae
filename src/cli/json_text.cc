#include "json_text.h"

#include <arrow/buffer.h>
#include <arrow/io/interfaces.h>
#include <arrow/result.h>
#include <arrow/status.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "skade/common/nesting.h"
#include "skade/format/types.h"

namespace skade::cli {
namespace {

// Whether values of `f` need TypedJson: floats (the non-finite words, overflow), maps, or a
// write-default to fill in where an object leaves the field out.
bool NeedsTyping(const NestedField& f) {
  const Type& t = *f.type;
  if (!f.write_default.empty() || t.id == TypeId::kFloat || t.id == TypeId::kDouble || t.id == TypeId::kMap)
    return true;
  return std::any_of(t.fields.begin(), t.fields.end(), [](const NestedField& c) { return NeedsTyping(c); });
}

bool HasWriteDefault(const std::vector<NestedField>& fields) {
  return std::any_of(fields.begin(), fields.end(), [](const NestedField& f) { return !f.write_default.empty(); });
}

// The index of a named field among a struct's fields; -1 when there is none.
int FieldIndex(const std::vector<NestedField>& fields, std::string_view name) {
  for (size_t i = 0; i < fields.size(); ++i)
    if (fields[i].name == name) return static_cast<int>(i);
  return -1;
}

bool IsNumberChar(char c) { return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'; }

// A stream of text changed as it is read (Transform appends each chunk's result to out_,
// Finish at the end); an error set by either fails the read.
class TextTransform : public arrow::io::InputStream {
 public:
  explicit TextTransform(std::shared_ptr<arrow::io::InputStream> in) : in_(std::move(in)) {}

  arrow::Status Close() override { return in_->Close(); }
  bool closed() const override { return in_->closed(); }
  arrow::Result<int64_t> Tell() const override { return handed_out_; }

  arrow::Result<int64_t> Read(int64_t nbytes, void* out) override {
    while (error_.ok() && static_cast<int64_t>(out_.size() - taken_) < nbytes && !eof_) {
      ARROW_ASSIGN_OR_RAISE(auto chunk, in_->Read(kChunkBytes));
      out_.erase(0, taken_);
      taken_ = 0;
      if (chunk->size() == 0) {
        eof_ = true;
        Finish();
      } else {
        Transform(std::string_view(reinterpret_cast<const char*>(chunk->data()), chunk->size()));
      }
    }
    if (!error_.ok()) return error_;
    const int64_t n = std::min<int64_t>(nbytes, static_cast<int64_t>(out_.size() - taken_));
    std::memcpy(out, out_.data() + taken_, static_cast<size_t>(n));
    taken_ += static_cast<size_t>(n);
    handed_out_ += n;
    return n;
  }

  arrow::Result<std::shared_ptr<arrow::Buffer>> Read(int64_t nbytes) override {
    ARROW_ASSIGN_OR_RAISE(auto buffer, arrow::AllocateResizableBuffer(nbytes));
    ARROW_ASSIGN_OR_RAISE(int64_t n, Read(nbytes, buffer->mutable_data()));
    ARROW_RETURN_NOT_OK(buffer->Resize(n, /*shrink_to_fit=*/false));
    return std::shared_ptr<arrow::Buffer>(std::move(buffer));
  }

 protected:
  virtual void Transform(std::string_view chunk) = 0;
  virtual void Finish() = 0;

  std::string out_;  // transformed bytes; those before taken_ were handed out
  arrow::Status error_;

 private:
  static constexpr int64_t kChunkBytes = 64 << 10;

  std::shared_ptr<arrow::io::InputStream> in_;
  size_t taken_ = 0;
  int64_t handed_out_ = 0;
  bool eof_ = false;
};

// JSON input as Arrow's JSON-lines parser takes it. Its nesting is checked on the way, so
// a line deeper than kMaxJsonDepth fails the read before the parser (which recurses) sees
// it. A document whose first character is `[` holds one array of objects: the outer
// brackets go, the commas between elements become line ends, line ends inside an element
// spaces. Anything else is taken for JSON lines and passes as it is.
class JsonRows final : public TextTransform {
 public:
  using TextTransform::TextTransform;

 private:
  void Transform(std::string_view chunk) override {
    if (!nesting_.Feed(chunk)) {
      error_ = arrow::Status::Invalid("line ", nesting_.line(), " is nested deeper than ", nesting_.limit(), " levels");
      return;
    }
    for (size_t i = 0; i < chunk.size(); ++i) {
      if (form_ == Form::kLines) {
        out_.append(chunk.substr(i));
        return;
      }
      Step(chunk[i]);
    }
  }

  void Step(char c) {
    const bool space = c == ' ' || c == '\t' || c == '\r' || c == '\n';
    if (form_ == Form::kUnknown) {
      if (space) {
        out_ += c;
      } else if (c == '[') {
        form_ = Form::kArray;
        depth_ = 1;
      } else {
        form_ = Form::kLines;
        out_ += c;
      }
      return;
    }
    if (in_string_) {
      out_ += c;
      if (escaped_) escaped_ = false;
      else if (c == '\\') escaped_ = true;
      else if (c == '"') in_string_ = false;
      return;
    }
    if (depth_ == 0) {  // after the array
      if (!space && error_.ok()) error_ = arrow::Status::Invalid("text after the JSON array that holds the rows");
      return;
    }
    switch (c) {
      case '"': in_string_ = true; break;
      case '[':
      case '{': ++depth_; break;
      case ']':
      case '}':
        if (--depth_ == 0) {
          out_ += '\n';
          return;
        }
        break;
      case ',':
        if (depth_ == 1) {
          out_ += '\n';
          return;
        }
        break;
      case '\n':
      case '\r': c = ' '; break;
      default: break;
    }
    out_ += c;
  }

  void Finish() override {
    if (depth_ > 0 && error_.ok()) error_ = arrow::Status::Invalid("the JSON array that holds the rows is not closed");
  }

  enum class Form { kUnknown, kLines, kArray };
  Form form_ = Form::kUnknown;
  JsonDepthScanner nesting_;
  int depth_ = 0;  // in the array: 1 between its elements
  bool in_string_ = false, escaped_ = false;
};

class TypedJson final : public TextTransform {
 public:
  TypedJson(std::shared_ptr<arrow::io::InputStream> in, const Schema& schema)
      : TextTransform(std::move(in)), columns_(schema.fields()) {}

 private:
  static constexpr size_t kLongestWord = 9;  // "-Infinity"

  void Transform(std::string_view chunk) override {
    for (char c : chunk) Step(c);
  }

  void Step(char c) {
    if (held_ && Hold(c)) return;
    if (in_string_) {
      InString(c);
      return;
    }
    if (in_number_) {
      if (IsNumberChar(c)) {
        number_ += c;
        out_ += c;
        return;
      }
      in_number_ = false;
      CheckNumber();
    }
    Structure(c);
  }

  // A value string of a float column is held back until it shows whether it spells a
  // non-finite float; false once it cannot (an escape, too long): then it is an ordinary string.
  bool Hold(char c) {
    if (c == '"') {
      held_ = in_string_ = false;
      if (IsNonFiniteWord(held_text_)) {
        out_ += held_text_;
      } else {
        out_ += '"';
        out_ += held_text_;
        out_ += '"';
      }
      return true;
    }
    if (c != '\\' && held_text_.size() < kLongestWord) {
      held_text_ += c;
      return true;
    }
    held_ = false;
    out_ += '"';
    out_ += held_text_;
    return false;
  }

  void InString(char c) {
    out_ += c;
    if (escaped_) {
      escaped_ = false;
    } else if (c == '\\') {
      escaped_ = true;
    } else if (c == '"') {
      in_string_ = false;
      if (key_) {  // the type of the value that follows
        Frame& f = stack_.back();
        const int i = f.fields ? FieldIndex(*f.fields, key_text_) : -1;
        f.next = f.map ? f.type->value().type.get() : i >= 0 ? (*f.fields)[i].type.get() : nullptr;
        if (i >= 0 && f.fill) seen_[stack_.size() - 1][i] = 1;
        if (stack_.size() == 1) column_ = key_text_;
        key_ = false;
      }
      return;
    }
    if (key_) key_text_ += c;  // escapes kept as written: such a key matches no field here
  }

  // The type of the value starting here: of the key before it in an object, of the
  // elements in an array; null where unknown (and for the top-level objects themselves).
  const Type* ValueType() const {
    if (stack_.empty()) return nullptr;
    const Frame& f = stack_.back();
    if (f.object) return f.next;
    return f.type && f.type->id == TypeId::kList ? f.type->element().type.get() : nullptr;
  }

  // Bits of a float value starting here, 0 when it is not one.
  int Bits() const {
    const Type* t = ValueType();
    return !t ? 0 : t->id == TypeId::kFloat ? 32 : t->id == TypeId::kDouble ? 64 : 0;
  }

  // Whether the innermost open object is a map's (its entries are being rewritten).
  bool InMap() const { return !stack_.empty() && stack_.back().map; }

  // Structural characters; a map's object {"k": v, ...} becomes [{"key": "k", "value": v}, ...].
  void Structure(char c) {
    out_ += c;
    switch (c) {
      case '"':
        in_string_ = true;
        if (expect_key_) {
          key_ = true;
          key_text_.clear();
          ++stack_.back().entries;
          if (InMap()) out_.insert(out_.size() - 1, "{\"key\":");
        } else if (Bits() != 0) {
          out_.pop_back();
          held_ = true;
          held_text_.clear();
        }
        break;
      case '{':
      case '[': {
        if (stack_.empty()) ++row_;
        const Type* type = ValueType();
        const bool map = c == '{' && type && type->id == TypeId::kMap;
        if (map) out_.back() = '[';
        if (c == '[' && type && type->id == TypeId::kMap && error_.ok())
          error_ = arrow::Status::Invalid("column '", column_, "' row ", row_, ": a map is written as a JSON object, not an array");
        const std::vector<NestedField>* fields = c != '{'                                 ? nullptr
                                                 : stack_.empty()                          ? &columns_
                                                 : type && type->id == TypeId::kStruct ? &type->fields
                                                                                         : nullptr;
        const bool fill = fields && HasWriteDefault(*fields);
        if (fill) {
          if (seen_.size() <= stack_.size()) seen_.resize(stack_.size() + 1);
          seen_[stack_.size()].assign(fields->size(), 0);
        }
        stack_.push_back(Frame{c == '{', type, nullptr, map, 0, fields, fill});
        expect_key_ = c == '{';
        break;
      }
      case '}':
      case ']':
        if (InMap()) {
          out_.pop_back();
          out_ += stack_.back().entries > 0 ? "}]" : "]";
        } else if (c == '}' && !stack_.empty() && stack_.back().fill) {
          FillDefaults();
        }
        if (!stack_.empty()) stack_.pop_back();
        expect_key_ = false;
        break;
      case ',':
        if (InMap()) out_.insert(out_.size() - 1, "}");
        expect_key_ = !stack_.empty() && stack_.back().object;
        break;
      case ':':
        if (InMap()) {
          out_.pop_back();
          out_ += ",\"value\":";
        }
        expect_key_ = false;
        break;
      default:
        if ((c == '-' || (c >= '0' && c <= '9')) && (bits_ = Bits()) != 0) {
          in_number_ = true;
          number_.assign(1, c);
        }
        break;
    }
  }

  // Before the closing brace just written: each field with a write-default that the object
  // left out, as `"name": default` (Arrow's parser would read a missing key as null).
  void FillDefaults() {
    const Frame& f = stack_.back();
    const std::vector<char>& seen = seen_[stack_.size() - 1];
    out_.pop_back();
    bool comma = f.entries > 0;
    for (size_t i = 0; i < f.fields->size(); ++i) {
      const NestedField& field = (*f.fields)[i];
      if (field.write_default.empty() || seen[i]) continue;
      if (comma) out_ += ',';
      out_ += nlohmann::json(field.name).dump();
      out_ += ':';
      out_ += field.write_default;
      comma = true;
    }
    out_ += '}';
  }

  // Arrow's parser would read a number too large for the floats as an infinity.
  void CheckNumber() {
    // Without an exponent, 38 characters cannot pass a float's largest value (3.4e38).
    if (number_.size() <= 38 && number_.find_first_of("eE") == std::string::npos) return;
    const bool too_large = bits_ == 32 ? std::isinf(std::strtof(number_.c_str(), nullptr))
                                       : std::isinf(std::strtod(number_.c_str(), nullptr));
    if (!too_large || !error_.ok()) return;
    error_ = arrow::Status::Invalid("column '", column_, "' row ", row_, ": a number too large for type ",
                                    bits_ == 32 ? "float" : "double", " (",
                                    number_.size() > 40 ? number_.substr(0, 40) + "..." : number_, ")");
  }

  void Finish() override {
    if (held_) {  // an unterminated string: Arrow's parser names it
      out_ += '"';
      out_ += held_text_;
      held_ = false;
    }
    if (in_number_) CheckNumber();
  }

  // An open object or array, with the type of its value (null where unknown) and, in an
  // object, the type of the value after the last key and the count of its keys. A row's or a
  // struct's object knows its fields, and whether one of them has a write-default (`fill`:
  // seen_ at its depth marks the fields its keys named).
  struct Frame {
    bool object;
    const Type* type;
    const Type* next;
    bool map;
    int64_t entries;
    const std::vector<NestedField>* fields;
    bool fill;
  };

  const std::vector<NestedField> columns_;  // the table's: their types outlive the frames

  std::vector<Frame> stack_;
  std::vector<std::vector<char>> seen_;  // by depth, kept for the next object there
  bool expect_key_ = false;
  bool in_string_ = false, escaped_ = false;
  bool key_ = false;  // the string is a key
  std::string key_text_;
  bool held_ = false;
  std::string held_text_;
  bool in_number_ = false;
  std::string number_;
  int bits_ = 0;  // of the number being read
  std::string column_;  // the top-level key last read
  int64_t row_ = 0;
};

}  // namespace

bool IsNonFiniteWord(std::string_view s) { return s == "NaN" || s == "Infinity" || s == "-Infinity"; }

std::shared_ptr<arrow::io::InputStream> JsonRowsStream(std::shared_ptr<arrow::io::InputStream> in) {
  return std::make_shared<JsonRows>(std::move(in));
}

std::shared_ptr<arrow::io::InputStream> TypedJsonStream(std::shared_ptr<arrow::io::InputStream> in,
                                                        const Schema& schema) {
  const auto& fields = schema.fields();
  if (std::none_of(fields.begin(), fields.end(), [](const NestedField& f) { return NeedsTyping(f); })) return in;
  return std::make_shared<TypedJson>(std::move(in), schema);
}

}  // namespace skade::cli
