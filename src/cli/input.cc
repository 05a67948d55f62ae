#include "input.h"

#include <arrow/api.h>
#include <arrow/compute/api.h>
#include <arrow/csv/api.h>
#include <arrow/io/file.h>
#include <arrow/io/memory.h>
#include <arrow/json/api.h>
#include <nlohmann/json.hpp>
#include <parquet/arrow/reader.h>
#include <parquet/arrow/schema.h>

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <optional>
#include <set>

#include "json_text.h"
#include "skade/common/nesting.h"
#include "skade/table/arrow_internal.h"
#include "skade/table/arrow_schema.h"
#include "skade/table/parquet_read.h"

namespace skade::cli {
namespace {

std::string Lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// The type the JSON parser reads a column as, so that it takes only values of the JSON
// kind the table's type has (a number for a number, a string for text...) at any depth.
// Decimals may be JSON numbers or strings: Arrow keeps a number's text, so both are read
// exactly at the widest precision and scale of any Iceberg decimal, then narrowed with
// row-precise errors when the batch is conformed to the table, as are the types read as
// text (dates, times, uuids...). A map's object arrives as a list of key/value entries
// (TypedJsonStream rewrites it), its keys as the strings JSON keys are.
std::shared_ptr<arrow::DataType> JsonReadType(const Type& t) {
  switch (t.id) {
    case TypeId::kBoolean:
    case TypeId::kInt:
    case TypeId::kLong:
    case TypeId::kFloat:
    case TypeId::kDouble:
    case TypeId::kString: return ToArrowType(t);
    case TypeId::kDecimal: return arrow::decimal256(76, 38);
    case TypeId::kStruct: {
      arrow::FieldVector fields;
      for (const auto& f : t.fields) fields.push_back(arrow::field(f.name, JsonReadType(*f.type)));
      return arrow::struct_(fields);
    }
    case TypeId::kList: return arrow::list(JsonReadType(*t.element().type));
    case TypeId::kMap:
      return arrow::list(arrow::struct_({arrow::field("key", arrow::utf8()),
                                         arrow::field("value", JsonReadType(*t.value().type))}));
    default: return arrow::utf8();
  }
}

// A field below a column as Arrow's JSON parser names it ("/s/e/[]", a map's entries
// "/m/[]/value") in the table's words ("s.e.element", "m.value"), with its type (null
// where the table has no such field).
std::pair<std::string, const Type*> JsonFieldName(std::string_view arrow_path, const Schema& schema) {
  std::vector<std::string> parts;
  for (size_t at = 0; at <= arrow_path.size();) {
    size_t slash = std::min(arrow_path.find('/', at), arrow_path.size());
    if (slash > at) parts.emplace_back(arrow_path.substr(at, slash - at));
    at = slash + 1;
  }
  if (parts.empty()) return {"", nullptr};
  const NestedField* top = schema.FindTopLevel(parts[0]);
  std::string name = parts[0];
  const Type* t = top ? top->type.get() : nullptr;
  for (size_t i = 1; i < parts.size(); ++i) {
    const std::string& p = parts[i];
    const NestedField* next = nullptr;
    if (t && t->id == TypeId::kList && p == "[]") {
      next = &t->element();
    } else if (t && t->id == TypeId::kMap && p == "[]" && i + 1 < parts.size()) {
      next = parts[++i] == "key" ? &t->key() : &t->value();
    } else if (t && t->id == TypeId::kStruct) {
      for (const auto& f : t->fields)
        if (f.name == p) next = &f;
    }
    name += "." + (next ? next->name : p);
    t = next ? next->type.get() : nullptr;
  }
  return {name, t};
}

// Arrow's "Column(/NAME) changed from string to number in row N" (N counts from the
// start of a block, not of the file) in the words of the table's columns; nullopt for
// any other error.
std::optional<std::string> KindMismatch(const arrow::Status& st, const Schema& schema) {
  const std::string& m = st.message();
  const std::string open = "Column(", changed = ") changed from ", to = " to ";
  size_t a = m.find(open), b = m.find(changed, a == std::string::npos ? 0 : a);
  size_t c = b == std::string::npos ? b : m.find(to, b + changed.size());
  if (a == std::string::npos || b == std::string::npos || c == std::string::npos) return std::nullopt;
  auto [column, type] = JsonFieldName(m.substr(a + open.size(), b - a - open.size()), schema);  // "" for a row
  std::string want = m.substr(b + changed.size(), c - b - changed.size());
  std::string got = m.substr(c + to.size());
  got = got.substr(0, got.find(' '));
  if (column.empty()) return "each row must be a JSON object, but one is a JSON " + got;
  const char* article = want.empty() || std::string_view("aeiou").find(want[0]) == std::string_view::npos ? "a " : "an ";
  return "column '" + column + "' holds a JSON " + got + " where " + article + want + " is expected" +
         (type ? " (its type is " + type->ToString() + ")" : std::string());
}

// Whether a JSON value (not null) of a primitive type fits it as Arrow's parser reads it.
bool FitsJson(const nlohmann::json& v, const Type& t) {
  switch (t.id) {
    case TypeId::kInt:
      return v.is_number_integer() && v.get<int64_t>() >= INT32_MIN && v.get<int64_t>() <= INT32_MAX &&
             !(v.is_number_unsigned() && v.get<uint64_t>() > INT32_MAX);
    case TypeId::kLong: return v.is_number_integer() && !(v.is_number_unsigned() && v.get<uint64_t>() > INT64_MAX);
    case TypeId::kFloat:
    case TypeId::kDouble: return v.is_number() || (v.is_string() && IsNonFiniteWord(v.get_ref<const std::string&>()));
    case TypeId::kDecimal: {
      if (!v.is_string() && !v.is_number()) return false;
      arrow::Decimal256 value;
      int32_t precision = 0, scale = 0;
      return arrow::Decimal256::FromString(v.is_string() ? v.get<std::string>() : v.dump(), &value, &precision, &scale)
                 .ok() &&
             scale <= 38 && precision - scale <= 38;
    }
    default: return true;  // read as text, or a kind KindMismatch names
  }
}

// A value that does not fit its field's type.
struct JsonMisfit {
  std::string field;  // "s.a", "tags.element", "m.value"
  const nlohmann::json* value;
  const Type* type;
};

// The first value at or below `v` (a value of field `path`) that does not fit its type;
// nullopt when all fit.
std::optional<JsonMisfit> Misfit(const nlohmann::json& v, const Type& t, const std::string& path) {
  if (v.is_null()) return std::nullopt;
  if (t.id == TypeId::kStruct && v.is_object()) {
    for (const auto& f : t.fields)
      if (auto it = v.find(f.name); it != v.end())
        if (auto bad = Misfit(*it, *f.type, path + "." + f.name)) return bad;
  } else if ((t.id == TypeId::kList && v.is_array()) || (t.id == TypeId::kMap && v.is_object())) {
    const NestedField& inner = t.id == TypeId::kList ? t.element() : t.value();
    for (const auto& e : v)
      if (auto bad = Misfit(e, *inner.type, path + "." + inner.name)) return bad;
  } else if (t.is_primitive() && !FitsJson(v, t)) {
    return JsonMisfit{path, &v, &t};
  }
  return std::nullopt;
}

// JSON lines read again to find the row an error of the parser is about.
using JsonLines = std::function<arrow::Result<std::shared_ptr<arrow::io::InputStream>>()>;

// The rows of a JSON-lines file, or the elements of a JSON array document (as lines).
JsonLines FileRows(const std::string& path) {
  return [path]() -> arrow::Result<std::shared_ptr<arrow::io::InputStream>> {
    ARROW_ASSIGN_OR_RAISE(auto file, arrow::io::ReadableFile::Open(path));
    return JsonRowsStream(std::move(file));
  };
}

// Calls `row` with each line of `lines` until it returns false.
arrow::Status ForEachRow(const JsonLines& lines, const std::function<bool(const std::string&)>& row) {
  ARROW_ASSIGN_OR_RAISE(auto in, lines());
  std::string pending;
  for (;;) {
    ARROW_ASSIGN_OR_RAISE(auto chunk, in->Read(1 << 20));
    if (chunk->size() == 0) break;
    pending.append(reinterpret_cast<const char*>(chunk->data()), static_cast<size_t>(chunk->size()));
    size_t start = 0;
    for (size_t end; (end = pending.find('\n', start)) != std::string::npos; start = end + 1)
      if (!row(pending.substr(start, end - start))) return arrow::Status::OK();
    pending.erase(0, start);
  }
  if (!pending.empty()) row(pending);
  return arrow::Status::OK();
}

// Follows a JSON line's top-level keys and stops at a number too large for a double
// (nlohmann's error 406), noting its key and text.
class NumberTooLarge final : public nlohmann::json_sax<nlohmann::json> {
 public:
  std::string top_key, text;
  bool found = false;
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return ++depth_, true; }
  bool key(string_t& k) override {
    if (depth_ == 1) top_key = k;
    return true;
  }
  bool end_object() override { return --depth_, true; }
  bool start_array(std::size_t) override { return ++depth_, true; }
  bool end_array() override { return --depth_, true; }
  bool parse_error(std::size_t, const std::string& token, const nlohmann::detail::exception& e) override {
    found = e.id == 406 && depth_ >= 1;
    text = token;
    return false;
  }

 private:
  int depth_ = 0;
};

// Arrow's parser names neither the column nor the row of a value it cannot convert ("Failed
// to convert JSON to int32, couldn't parse:1.5", "The string 'oops' is not a valid
// decimal256 number", "Number too big to be stored in double"): the first such value is
// looked for row by row (numbered after `first_row`), and named as a text input's would be;
// nullopt when none is found.
std::optional<std::string> BadValue(const arrow::Status& st, const Schema& schema, const JsonLines& lines,
                                    int64_t first_row) {
  const std::string& m = st.message();
  const bool too_big = m.find("Number too big") != std::string::npos;
  if (m.find("Failed to convert JSON to") == std::string::npos && m.find("decimal256") == std::string::npos &&
      !too_big)
    return std::nullopt;
  std::optional<std::string> found;
  int64_t row = first_row;
  auto check = [&](const std::string& line) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) return true;  // Arrow's reader skips blank lines
    ++row;
    if (too_big) {
      NumberTooLarge sax;
      nlohmann::json::sax_parse(line, &sax, nlohmann::json::input_format_t::json, /*strict=*/false);
      if (!sax.found) return true;
      const NestedField* f = schema.FindTopLevel(sax.top_key);
      found = "column '" + sax.top_key + "' row " + std::to_string(row) + ": a number too large for type " +
              (f ? f->type->ToString() : std::string("double")) + " (" + sax.text + ")";
      return false;
    }
    auto doc = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!doc.is_object()) return true;
    for (const auto& f : schema.fields()) {
      auto it = doc.find(f.name);
      if (it == doc.end()) continue;
      auto bad = Misfit(*it, *f.type, f.name);
      if (!bad) continue;
      const nlohmann::json& value = *bad->value;
      found = "column '" + bad->field + "' row " + std::to_string(row) + ": value " +
              (value.is_string() ? value.get<std::string>() : value.dump()) + " does not fit type " +
              bad->type->ToString();
      return false;
    }
    return true;
  };
  if (!ForEachRow(lines, check).ok()) return std::nullopt;
  return found;
}

// Arrow's syntax error names a row counted from 0 within its block ("JSON parse error:
// Invalid value. in row 1"): the first row that is not JSON is looked for and named as
// skade counts rows (from 1 after `first_row`, blank lines skipped), with its start.
std::optional<std::string> NotJson(const arrow::Status& st, const JsonLines& lines, int64_t first_row) {
  static constexpr std::string_view kPrefix = "JSON parse error: ";
  const std::string& m = st.message();
  const size_t at = m.find(kPrefix);
  if (at == std::string::npos) return std::nullopt;
  std::string reason = m.substr(at + kPrefix.size());
  if (const size_t in_row = reason.rfind(" in row "); in_row != std::string::npos) reason.resize(in_row);
  std::optional<std::string> found;
  int64_t row = first_row;
  auto check = [&](const std::string& line) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) return true;
    ++row;
    if (nlohmann::json::accept(line)) return true;
    const std::string start = line.size() > 60 ? line.substr(0, 60) + "..." : line;
    found = "row " + std::to_string(row) + " is not valid JSON (" + reason + "): " + start;
    return false;
  };
  if (!ForEachRow(lines, check).ok()) return std::nullopt;
  return found;
}

// The JSON parser's error in the words of the table's columns (KindMismatch, BadValue);
// for a JSON input file, also naming the row that is not JSON (`file_rows`: NotJson; a CSV
// cell's own error says more than its made-up row would).
std::optional<std::string> Reworded(const arrow::Status& st, const Schema& schema, const JsonLines& lines,
                                    int64_t first_row = 0, bool file_rows = false) {
  auto reworded = KindMismatch(st, schema);
  if (!reworded) reworded = BadValue(st, schema, lines, first_row);
  if (!reworded && file_rows) reworded = NotJson(st, lines, first_row);
  return reworded;
}

// Rewords the JSON parser's errors as the batches are read.
class JsonLinesReader final : public arrow::RecordBatchReader {
 public:
  JsonLinesReader(std::shared_ptr<arrow::RecordBatchReader> r, const Schema& schema, std::string path)
      : reader_(std::move(r)), schema_(schema), path_(std::move(path)) {}
  std::shared_ptr<arrow::Schema> schema() const override { return reader_->schema(); }
  arrow::Status ReadNext(std::shared_ptr<arrow::RecordBatch>* out) override {
    auto st = reader_->ReadNext(out);
    if (!st.ok()) {
      auto reworded = Reworded(st, schema_, FileRows(path_), 0, /*file_rows=*/true);
      return reworded ? arrow::Status::Invalid(*reworded) : st;
    }
    return st;
  }

 private:
  std::shared_ptr<arrow::RecordBatchReader> reader_;
  Schema schema_;
  std::string path_;
};

// Where a CSV file's first record with another number of fields than its header is:
// "row R (line L) has F fields where the header has H", for Arrow's parse error, which
// gives the record's text but not its place (the streaming reader does not count rows).
// Fields and records are split as Arrow does: quotes (doubled inside) hold separators and
// line breaks; a bare \r\n or \n ends a record.
std::optional<std::string> CsvRecordWithOtherWidth(const std::string& path, char delimiter) {
  std::ifstream in(path, std::ios::binary);
  int64_t line = 1, record = 0, record_line = 1, fields = 1, header = -1;
  bool quoted = false, any = false;
  auto end_record = [&]() -> std::optional<std::string> {
    if (!any) return std::nullopt;  // a blank line
    if (header < 0) header = fields;
    else if (fields != header)
      return "row " + std::to_string(record) + " (line " + std::to_string(record_line) + ") has " +
             std::to_string(fields) + " field" + (fields == 1 ? "" : "s") + " where the header has " +
             std::to_string(header);
    return std::nullopt;
  };
  std::vector<char> buf(1 << 20);
  for (;;) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    const auto n = static_cast<size_t>(in.gcount());
    if (n == 0) break;
    for (size_t i = 0; i < n; ++i) {
      const char c = buf[i];
      if (c == '\n') ++line;
      if (quoted) {
        if (c == '"') quoted = false;  // a doubled quote opens again at once
        continue;
      }
      if (c == '\n') {
        if (auto found = end_record()) return found;
        if (any) ++record;
        fields = 1, any = false, record_line = line;
        continue;
      }
      if (c == '\r') continue;
      if (c == '"') quoted = true;
      if (c == delimiter) ++fields;
      any = true;
    }
  }
  return end_record();
}

// Arrow's error for a CSV record of another width, with the record's place in `path`.
arrow::Status WithCsvRecordPlace(const arrow::Status& st, const std::string& path, char delimiter) {
  if (st.ok() || st.message().find("Expected ") == std::string::npos ||
      st.message().find(" columns, got ") == std::string::npos)
    return st;
  auto place = CsvRecordWithOtherWidth(path, delimiter);
  if (!place) return st;
  const auto text = st.message().find(": ", st.message().find(" columns, got "));
  return arrow::Status::Invalid(*place + (text == std::string::npos ? "" : st.message().substr(text)));
}

// CSV text for a column that is not text (numbers, dates, ...): an empty field, quoted or not,
// and the usual spellings of a missing value are null there; "NaN" stays a float's value.
// (A string column's "NA" or "null" is the string: only an unquoted empty field is null.)
class CsvNullsReader final : public arrow::RecordBatchReader {
 public:
  CsvNullsReader(std::shared_ptr<arrow::RecordBatchReader> r, const Schema& schema, std::string path, char delimiter)
      : reader_(std::move(r)), schema_(schema), path_(std::move(path)), delimiter_(delimiter) {}
  std::shared_ptr<arrow::Schema> schema() const override { return reader_->schema(); }
  arrow::Status ReadNext(std::shared_ptr<arrow::RecordBatch>* out) override {
    ARROW_RETURN_NOT_OK(WithCsvRecordPlace(reader_->ReadNext(out), path_, delimiter_));
    if (!*out) return arrow::Status::OK();
    static const std::shared_ptr<arrow::Array> spellings = [] {
      arrow::StringBuilder b;
      (void)b.AppendValues(std::vector<std::string>{"", "NA", "N/A", "NULL", "null", "#N/A"});
      return b.Finish().ValueOr(nullptr);
    }();
    InitArrowCompute();
    std::shared_ptr<arrow::RecordBatch> batch = *out;
    for (int c = 0; c < batch->num_columns(); ++c) {
      const NestedField* f = schema_.FindTopLevel(batch->schema()->field(c)->name());
      if (!f || f->type->id == TypeId::kString || f->type->id == TypeId::kBinary || f->type->id == TypeId::kFixed ||
          batch->column(c)->type_id() != arrow::Type::STRING)
        continue;
      ARROW_ASSIGN_OR_RAISE(auto found, arrow::compute::IsIn(batch->column(c), arrow::compute::SetLookupOptions(spellings)));
      auto missing = std::static_pointer_cast<arrow::BooleanArray>(found.make_array());
      if (missing->true_count() == 0) continue;
      ARROW_ASSIGN_OR_RAISE(auto nulled, arrow::compute::IfElse(missing, arrow::MakeNullScalar(arrow::utf8()),
                                                                batch->column(c)));
      ARROW_ASSIGN_OR_RAISE(batch, batch->SetColumn(c, batch->schema()->field(c), nulled.make_array()));
    }
    *out = std::move(batch);
    return arrow::Status::OK();
  }

 private:
  std::shared_ptr<arrow::RecordBatchReader> reader_;
  Schema schema_;
  std::string path_;
  char delimiter_;
};

// A nested column's CSV cells hold JSON text, as `scan --format csv` writes them: each
// batch's cells are read as JSON input is, as one array document of {"column": cell} rows
// (JsonRowsStream: the nesting limit, line breaks inside a cell; TypedJsonStream).
class CsvJsonCellsReader final : public arrow::RecordBatchReader {
 public:
  CsvJsonCellsReader(std::shared_ptr<arrow::RecordBatchReader> r, const Schema& schema) : reader_(std::move(r)) {
    arrow::FieldVector fields = reader_->schema()->fields();
    for (size_t c = 0; c < fields.size(); ++c)
      if (const NestedField* f = schema.FindTopLevel(fields[c]->name()); f && f->type->is_nested()) {
        nested_.emplace_back(static_cast<int>(c), *f);
        fields[c] = arrow::field(fields[c]->name(), JsonReadType(*f->type));
      }
    schema_ = arrow::schema(fields);
  }
  std::shared_ptr<arrow::Schema> schema() const override { return schema_; }
  arrow::Status ReadNext(std::shared_ptr<arrow::RecordBatch>* out) override {
    ARROW_RETURN_NOT_OK(reader_->ReadNext(out));
    if (!*out) return arrow::Status::OK();
    std::shared_ptr<arrow::RecordBatch> batch = *out;
    for (const auto& [c, f] : nested_) {
      ARROW_ASSIGN_OR_RAISE(auto parsed, Parse(static_cast<const arrow::StringArray&>(*batch->column(c)), f));
      ARROW_ASSIGN_OR_RAISE(batch, batch->SetColumn(c, arrow::field(f.name, parsed->type()), parsed));
    }
    rows_ += batch->num_rows();
    *out = std::move(batch);
    return arrow::Status::OK();
  }

 private:
  arrow::Result<std::shared_ptr<arrow::Array>> Parse(const arrow::StringArray& cells, const NestedField& f) {
    const std::string key = "{" + nlohmann::json(f.name).dump() + ":";
    std::string text = "[";
    for (int64_t r = 0; r < cells.length(); ++r) {
      if (r > 0) text += ',';
      text += key;
      text += cells.IsNull(r) ? std::string_view("null") : cells.GetView(r);
      text += "}";
    }
    text += "]";
    const Schema one(0, {f});
    std::shared_ptr<arrow::Buffer> buffer = arrow::Buffer::FromString(std::move(text));
    JsonLines lines = [buffer]() -> arrow::Result<std::shared_ptr<arrow::io::InputStream>> {
      return JsonRowsStream(std::make_shared<arrow::io::BufferReader>(buffer));
    };
    auto read = arrow::json::ReadOptions::Defaults();
    read.use_threads = false;
    read.block_size = static_cast<int32_t>(std::min<int64_t>(std::max<int64_t>(buffer->size(), 1 << 20), INT32_MAX));
    auto parse = arrow::json::ParseOptions::Defaults();
    parse.explicit_schema = arrow::schema({arrow::field(f.name, JsonReadType(*f.type))});
    parse.unexpected_field_behavior = arrow::json::UnexpectedFieldBehavior::InferType;
    ARROW_ASSIGN_OR_RAISE(auto stream, lines());
    auto table = arrow::json::TableReader::Make(arrow::default_memory_pool(), TypedJsonStream(stream, one), read, parse)
                     .Map([](auto reader) { return reader->Read(); });
    if (table.ok() && (*table)->num_rows() == cells.length()) return arrow::Concatenate((*table)->column(0)->chunks());
    if (!table.ok())
      if (auto reworded = Reworded(table.status(), one, lines, rows_)) return arrow::Status::Invalid(*reworded);
    // A cell that is not one JSON value (or is nested too deep), by its row.
    for (int64_t r = 0; r < cells.length(); ++r) {
      if (cells.IsNull(r)) continue;
      const std::string_view cell = cells.GetView(r);
      const std::string at = "column '" + f.name + "' row " + std::to_string(rows_ + r + 1);
      if (auto deep = CheckJsonNesting(cell, at); !deep) return arrow::Status::Invalid(deep.error().message);
      if (!nlohmann::json::accept(cell))
        return arrow::Status::Invalid(at, ": the cell is not JSON text for ", f.type->ToString(), " (",
                                      cell.substr(0, 40), ")");
    }
    return table.ok() ? arrow::Status::Invalid("column '", f.name, "': the cells gave ", (*table)->num_rows(),
                                               " values for ", cells.length(), " rows")
                      : table.status();
  }

  std::shared_ptr<arrow::RecordBatchReader> reader_;
  std::vector<std::pair<int, NestedField>> nested_;  // the nested columns: index, table field
  std::shared_ptr<arrow::Schema> schema_;
  int64_t rows_ = 0;  // rows of the earlier batches
};

// Keeps the reader's owner (the Parquet FileReader) alive with the batches.
class OwningReader final : public arrow::RecordBatchReader {
 public:
  OwningReader(std::unique_ptr<parquet::arrow::FileReader> owner, std::unique_ptr<arrow::RecordBatchReader> r)
      : owner_(std::move(owner)), reader_(std::move(r)) {}
  std::shared_ptr<arrow::Schema> schema() const override { return reader_->schema(); }
  arrow::Status ReadNext(std::shared_ptr<arrow::RecordBatch>* out) override { return reader_->ReadNext(out); }

 private:
  std::unique_ptr<parquet::arrow::FileReader> owner_;
  std::unique_ptr<arrow::RecordBatchReader> reader_;
};

Status CheckColumnNames(const arrow::Schema& schema, const std::string& path) {
  std::set<std::string> seen;
  for (const auto& f : schema.fields())
    if (!seen.insert(f->name()).second)
      return InvalidArgument(path + ": column '" + f->name() + "' appears twice in the input");
  return {};
}

// A separator as --delimiter takes it, and as a message names it.
std::string DelimiterFlag(char c) { return c == '\t' ? "tab" : "'" + std::string(1, c) + "'"; }
std::string DelimiterName(char c) { return c == ',' ? "comma" : DelimiterFlag(c); }

// A header line without `delimiter` that holds another common separator would read as
// one column (and its rows as a parse error or missing columns): say which to give. The
// file's first 64 KiB are looked at, through the reader's own handle.
Status CheckHeaderSeparator(arrow::io::RandomAccessFile& file, const std::string& path, char delimiter,
                            const Schema& schema) {
  SKADE_ARROW_ASSIGN(auto head, file.ReadAt(0, 64 << 10), path);
  SKADE_ARROW_RETURN(file.Seek(0), path);  // the CSV reader reads on from the file's position
  std::string header = head->ToString();
  header.resize(std::min(header.size(), header.find('\n')));
  if (header.starts_with("\xEF\xBB\xBF")) header.erase(0, 3);
  if (header.ends_with('\r')) header.pop_back();
  if (header.find(delimiter) != std::string::npos || schema.FindTopLevel(header)) return {};
  for (char other : {';', '\t', '|', ','})
    if (header.find(other) != std::string::npos)
      return InvalidArgument(path + ": its header line holds no " + DelimiterName(delimiter) + " but " +
                             DelimiterName(other) + ": give --delimiter " + DelimiterFlag(other) +
                             " for a file separated so");
  return {};
}

Result<std::shared_ptr<arrow::RecordBatchReader>> Checked(std::shared_ptr<arrow::RecordBatchReader> reader,
                                                          const std::string& path) {
  SKADE_RETURN_IF_ERROR(CheckColumnNames(*reader->schema(), path));
  return reader;
}

}  // namespace

Status ReadInGrowingBlocks(const std::function<Status(int64_t block_bytes)>& read) {
  for (int64_t block = kInputBlockBytes;; block = std::min(block * 4, kMaxInputBlockBytes)) {
    Status st = read(block);
    // Arrow's words for a row that does not fit in one block.
    if (st || st.error().message.find("straddling") == std::string::npos || block >= kMaxInputBlockBytes) return st;
  }
}

Result<std::shared_ptr<arrow::RecordBatchReader>> OpenInput(const std::string& path, const Schema& schema,
                                                            int64_t block_bytes, const Schema* only, char delimiter,
                                                            const std::string& format) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return NotFound("input file not found: " + path);
  if (std::filesystem::is_directory(path, ec)) return InvalidArgument("input " + path + " is a directory, not a file");
  std::string ext = format.empty() ? Lower(std::filesystem::path(path).extension().string()) : "." + format;
  SKADE_ARROW_ASSIGN(auto file, arrow::io::ReadableFile::Open(path), path);
  if (ext == ".parquet" || ext == ".pq") {
    parquet::arrow::FileReaderBuilder b;
    auto st = b.Open(file);
    if (!st.ok()) return Corrupt(path + ": not a readable Parquet file (" + st.message() + ")");
    SKADE_ARROW_ASSIGN(auto reader, b.Build(), path);
    std::vector<int> leaves;
    for (const auto& field : reader->manifest().schema_fields)
      if (only && only->FindTopLevel(field.field->name()) != nullptr) CollectLeaves(field, &leaves);
    std::vector<int> row_groups(static_cast<size_t>(reader->num_row_groups()));
    std::iota(row_groups.begin(), row_groups.end(), 0);
    auto batches = only ? reader->GetRecordBatchReader(row_groups, leaves) : reader->GetRecordBatchReader();
    if (!batches.ok()) return Corrupt(path + ": " + batches.status().message());
    return Checked(std::make_shared<OwningReader>(std::move(reader), std::move(*batches)), path);
  }
  if (ext == ".csv" || ext == ".tsv" || ext == ".tab") {
    auto read = arrow::csv::ReadOptions::Defaults();
    read.block_size = static_cast<int32_t>(std::min<int64_t>(block_bytes, INT32_MAX));
    auto parse = arrow::csv::ParseOptions::Defaults();
    parse.delimiter = delimiter ? delimiter : ext == ".csv" ? ',' : '\t';
    auto convert = arrow::csv::ConvertOptions::Defaults();
    // Everything arrives as text and is converted when conformed to the table, so a
    // value that does not fit is reported with its column and row.
    for (const auto& f : schema.fields()) convert.column_types[f.name] = arrow::utf8();
    // Only an empty, unquoted field is null ("" is an empty string, as scan writes it): none
    // of Arrow's default null spellings ("NA", "null", "NaN"...), which are values of a string.
    // Text is checked to be UTF-8 when it is conformed to a string field, which names the row.
    convert.check_utf8 = false;
    convert.strings_can_be_null = true;
    convert.quoted_strings_can_be_null = false;
    convert.null_values = {""};
    SKADE_RETURN_IF_ERROR(CheckHeaderSeparator(*file, path, parse.delimiter, schema));
    auto reader = arrow::csv::StreamingReader::Make(arrow::io::default_io_context(), file, read, parse, convert);
    if (!reader.ok())
      return std::unexpected(FromArrow(WithCsvRecordPlace(reader.status(), path, parse.delimiter), path));
    std::shared_ptr<arrow::RecordBatchReader> nulls =
        std::make_shared<CsvNullsReader>(std::move(*reader), schema, path, parse.delimiter);
    if (only) return Checked(std::move(nulls), path);  // the identifier columns: never nested
    return Checked(std::make_shared<CsvJsonCellsReader>(std::move(nulls), schema), path);
  }
  if (ext == ".jsonl" || ext == ".json" || ext == ".ndjson") {
    auto read = arrow::json::ReadOptions::Defaults();
    read.block_size = static_cast<int32_t>(std::min<int64_t>(block_bytes, INT32_MAX));
    auto parse = arrow::json::ParseOptions::Defaults();
    arrow::FieldVector fields;
    for (const auto& f : schema.fields()) fields.push_back(arrow::field(f.name, JsonReadType(*f.type)));
    parse.explicit_schema = arrow::schema(fields);
    // A key the table does not have is read for the error that names it (ConformToSchema).
    parse.unexpected_field_behavior = arrow::json::UnexpectedFieldBehavior::InferType;
    auto reader = arrow::json::StreamingReader::Make(TypedJsonStream(JsonRowsStream(file), schema), read, parse);
    // No rows (an empty file, blank lines, `[]`): as a CSV file with a header only.
    if (!reader.ok() && reader.status().message().find("Empty JSON stream") != std::string::npos)
      return Checked(*arrow::RecordBatchReader::Make({}, parse.explicit_schema), path);
    if (!reader.ok()) {
      if (auto reworded = Reworded(reader.status(), schema, FileRows(path), 0, /*file_rows=*/true))
        return InvalidArgument(path + ": " + *reworded);
      return std::unexpected(FromArrow(reader.status(), path));
    }
    return Checked(std::make_shared<JsonLinesReader>(std::move(*reader), schema, path), path);
  }
  return InvalidArgument("cannot tell the format of '" + path +
                         "' (expected .parquet, .csv, .tsv, .tab, .jsonl, .json or .ndjson, or give --input-format)");
}

std::string InputFormatNames() {
  std::string names;
  for (std::string_view f : kInputFormats) names += (names.empty() ? "" : ", ") + std::string(f);
  return names;
}

Result<std::unique_ptr<InputFiles>> InputFiles::Make(const std::vector<std::string>& args, const std::string& format) {
  if (!format.empty() && std::ranges::find(kInputFormats, format) == kInputFormats.end())
    return InvalidArgument("--input-format takes one of " + InputFormatNames() + "; not '" + format + "'");
  std::unique_ptr<InputFiles> in(new InputFiles);
  for (const auto& a : args) {
    if (a != "-") {
      in->paths_.push_back(a);
      continue;
    }
    if (format.empty())
      return InvalidArgument("'-' reads standard input, whose format --input-format names (" +
                             InputFormatNames() + ")");
    if (!in->copy_.empty()) return InvalidArgument("'-' (standard input) may be given once");
    const char* tmp = std::getenv("TMPDIR");
    std::string dir = std::string(tmp && *tmp ? tmp : "/tmp") + "/skade-stdin-XXXXXX";
    if (!mkdtemp(dir.data())) return IoError("cannot make a folder for standard input under " + dir + ": " +
                                             std::strerror(errno));
    in->copy_ = dir + "/stdin." + format;
    std::ofstream out(in->copy_, std::ios::binary);
    std::vector<char> buffer(1 << 20);
    while (out) {
      const ssize_t n = read(STDIN_FILENO, buffer.data(), buffer.size());
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return IoError(std::string("cannot read standard input: ") + std::strerror(errno));
      if (n == 0) break;
      out.write(buffer.data(), n);
    }
    out.close();
    if (!out) return IoError("cannot write the copy of standard input at " + in->copy_ + " (is the disk full?)");
    in->paths_.push_back(in->copy_);
  }
  return in;
}

InputFiles::~InputFiles() {
  if (copy_.empty()) return;
  std::error_code ec;
  std::filesystem::remove_all(std::filesystem::path(copy_).parent_path(), ec);
}

Status InputFiles::Named(Status s) const {
  if (s || copy_.empty()) return s;
  Error e = std::move(s).error();
  for (size_t at; (at = e.message.find(copy_)) != std::string::npos;) e.message.replace(at, copy_.size(), "standard input");
  return std::unexpected(std::move(e));
}

}  // namespace skade::cli
