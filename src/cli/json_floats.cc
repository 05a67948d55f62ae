#include "json_floats.h"

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

#include "skade/format/types.h"

namespace skade::cli {
namespace {

// The bits of the floats at a value's leaves; 0 when it holds anything but floats.
int FloatBits(const Type& t) {
  switch (t.id) {
    case TypeId::kFloat: return 32;
    case TypeId::kDouble: return 64;
    case TypeId::kList: return FloatBits(*t.element().type);
    case TypeId::kMap: return FloatBits(*t.value().type);  // its keys are JSON object keys
    default: return 0;
  }
}

bool IsNumberChar(char c) { return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'; }

class FloatText final : public arrow::io::InputStream {
 public:
  FloatText(std::shared_ptr<arrow::io::InputStream> in, std::map<std::string, int> columns)
      : in_(std::move(in)), columns_(std::move(columns)) {}

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
        for (char c : std::string_view(reinterpret_cast<const char*>(chunk->data()), chunk->size())) Step(c);
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

 private:
  static constexpr int64_t kChunkBytes = 64 << 10;
  static constexpr size_t kLongestWord = 9;  // "-Infinity"

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
      if (held_text_ == "NaN" || held_text_ == "Infinity" || held_text_ == "-Infinity") {
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
      if (key_) {  // a top-level key: the column whose value follows
        auto it = columns_.find(key_text_);
        bits_ = it == columns_.end() ? 0 : it->second;
        column_ = key_text_;
        key_ = false;
      }
      return;
    }
    if (key_) key_text_ += c;  // escapes kept as written: such a key matches no column here
  }

  void Structure(char c) {
    out_ += c;
    switch (c) {
      case '"':
        in_string_ = true;
        if (expect_key_) {
          key_ = stack_.size() == 1;
          key_text_.clear();
        } else if (bits_ != 0) {
          out_.pop_back();
          held_ = true;
          held_text_.clear();
        }
        break;
      case '{':
        if (stack_.empty()) ++row_;
        stack_.push_back(true);
        expect_key_ = true;
        break;
      case '[':
        stack_.push_back(false);
        expect_key_ = false;
        break;
      case '}':
      case ']':
        if (!stack_.empty()) stack_.pop_back();
        if (stack_.size() <= 1) bits_ = 0;
        expect_key_ = false;
        break;
      case ',':
        expect_key_ = !stack_.empty() && stack_.back();
        if (stack_.size() == 1) bits_ = 0;
        break;
      case ':': expect_key_ = false; break;
      default:
        if (bits_ != 0 && (c == '-' || (c >= '0' && c <= '9'))) {
          in_number_ = true;
          number_.assign(1, c);
        }
        break;
    }
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

  void Finish() {
    if (held_) {  // an unterminated string: Arrow's parser names it
      out_ += '"';
      out_ += held_text_;
      held_ = false;
    }
    if (in_number_) CheckNumber();
  }

  std::shared_ptr<arrow::io::InputStream> in_;
  const std::map<std::string, int> columns_;
  std::string out_;  // transformed bytes; those before taken_ were handed out
  size_t taken_ = 0;
  int64_t handed_out_ = 0;
  bool eof_ = false;
  arrow::Status error_;

  std::vector<bool> stack_;  // open containers: true for an object
  bool expect_key_ = false;
  bool in_string_ = false, escaped_ = false;
  bool key_ = false;  // the string is a top-level key
  std::string key_text_;
  bool held_ = false;
  std::string held_text_;
  bool in_number_ = false;
  std::string number_;
  int bits_ = 0;  // of the column whose value this is; 0 outside float columns
  std::string column_;
  int64_t row_ = 0;
};

}  // namespace

std::map<std::string, int> FloatColumns(const Schema& schema) {
  std::map<std::string, int> out;
  for (const auto& f : schema.fields())
    if (int bits = FloatBits(*f.type)) out.emplace(f.name, bits);
  return out;
}

std::shared_ptr<arrow::io::InputStream> FloatTextStream(std::shared_ptr<arrow::io::InputStream> in,
                                                        std::map<std::string, int> columns) {
  return std::make_shared<FloatText>(std::move(in), std::move(columns));
}

}  // namespace skade::cli
