#include "input.h"

#include <arrow/api.h>
#include <arrow/csv/api.h>
#include <arrow/io/file.h>
#include <arrow/json/api.h>
#include <parquet/arrow/reader.h>
#include <parquet/arrow/schema.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <numeric>
#include <set>

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

// Types the JSON parser reads directly; the rest come in as text and are converted
// (with row-precise errors) when the batch is conformed to the table.
bool ParsesDirectly(const Type& t) {
  switch (t.id) {
    case TypeId::kBoolean:
    case TypeId::kInt:
    case TypeId::kLong:
    case TypeId::kFloat:
    case TypeId::kDouble:
    case TypeId::kString: return true;
    default: return false;
  }
}

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

// JSON lines are checked for depth before Arrow's parser (which recurses) sees them.
Status CheckJsonLinesDepth(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return IoError("cannot read " + path + ": " + std::strerror(errno));
  JsonDepthScanner scanner;
  std::vector<char> buf(1 << 20);
  bool ok = true;
  while (ok) {
    size_t n = std::fread(buf.data(), 1, buf.size(), f);
    if (n == 0) break;
    ok = scanner.Feed(std::string_view(buf.data(), n));
  }
  bool failed = std::ferror(f);
  std::fclose(f);
  if (failed) return IoError("cannot read " + path + ": " + std::strerror(errno));
  if (!ok)
    return InvalidArgument(path + ": line " + std::to_string(scanner.line()) + " is nested deeper than " +
                           std::to_string(scanner.limit()) + " levels");
  return {};
}

Status CheckColumnNames(const arrow::Schema& schema, const std::string& path) {
  std::set<std::string> seen;
  for (const auto& f : schema.fields())
    if (!seen.insert(f->name()).second)
      return InvalidArgument(path + ": column '" + f->name() + "' appears twice in the input");
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
                                                            int64_t block_bytes, const Schema* only) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return NotFound("input file not found: " + path);
  if (std::filesystem::is_directory(path, ec)) return InvalidArgument("input " + path + " is a directory, not a file");
  std::string ext = Lower(std::filesystem::path(path).extension().string());
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
  if (ext == ".csv") {
    auto read = arrow::csv::ReadOptions::Defaults();
    read.block_size = static_cast<int32_t>(std::min<int64_t>(block_bytes, INT32_MAX));
    auto parse = arrow::csv::ParseOptions::Defaults();
    auto convert = arrow::csv::ConvertOptions::Defaults();
    // Everything arrives as text and is converted when conformed to the table, so a
    // value that does not fit is reported with its column and row.
    for (const auto& f : schema.fields()) convert.column_types[f.name] = arrow::utf8();
    convert.strings_can_be_null = true;
    SKADE_ARROW_ASSIGN(auto reader,
                       arrow::csv::StreamingReader::Make(arrow::io::default_io_context(), file, read, parse, convert),
                       path);
    return Checked(std::move(reader), path);
  }
  if (ext == ".jsonl" || ext == ".json" || ext == ".ndjson") {
    SKADE_RETURN_IF_ERROR(CheckJsonLinesDepth(path));
    auto read = arrow::json::ReadOptions::Defaults();
    read.block_size = static_cast<int32_t>(std::min<int64_t>(block_bytes, INT32_MAX));
    auto parse = arrow::json::ParseOptions::Defaults();
    arrow::FieldVector fields;
    for (const auto& f : schema.fields())
      if (ParsesDirectly(*f.type)) fields.push_back(arrow::field(f.name, ToArrowType(*f.type)));
      else if (f.type->is_primitive()) fields.push_back(arrow::field(f.name, arrow::utf8()));
    parse.explicit_schema = arrow::schema(fields);
    parse.unexpected_field_behavior = arrow::json::UnexpectedFieldBehavior::InferType;
    SKADE_ARROW_ASSIGN(auto reader, arrow::json::StreamingReader::Make(file, read, parse), path);
    return Checked(std::move(reader), path);
  }
  return InvalidArgument("cannot tell the format of '" + path +
                         "' (expected .parquet, .csv, .jsonl, .json or .ndjson)");
}

}  // namespace skade::cli
