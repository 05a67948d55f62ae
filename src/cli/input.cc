#include "input.h"

#include <arrow/api.h>
#include <arrow/csv/api.h>
#include <arrow/io/file.h>
#include <arrow/json/api.h>
#include <parquet/arrow/reader.h>

#include <filesystem>

#include "skade/table/arrow_internal.h"
#include "skade/table/arrow_schema.h"

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

}  // namespace

Result<std::shared_ptr<arrow::RecordBatchReader>> OpenInput(const std::string& path, const Schema& schema) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return NotFound("input file not found: " + path);
  std::string ext = Lower(std::filesystem::path(path).extension().string());
  SKADE_ARROW_ASSIGN(auto file, arrow::io::ReadableFile::Open(path), path);
  if (ext == ".parquet" || ext == ".pq") {
    parquet::arrow::FileReaderBuilder b;
    auto st = b.Open(file);
    if (!st.ok()) return Corrupt(path + ": not a readable Parquet file (" + st.message() + ")");
    SKADE_ARROW_ASSIGN(auto reader, b.Build(), path);
    auto batches = reader->GetRecordBatchReader();
    if (!batches.ok()) return Corrupt(path + ": " + batches.status().message());
    return std::shared_ptr<arrow::RecordBatchReader>(
        std::make_shared<OwningReader>(std::move(reader), std::move(*batches)));
  }
  if (ext == ".csv") {
    auto read = arrow::csv::ReadOptions::Defaults();
    auto parse = arrow::csv::ParseOptions::Defaults();
    auto convert = arrow::csv::ConvertOptions::Defaults();
    // Everything arrives as text and is converted when conformed to the table, so a
    // value that does not fit is reported with its column and row.
    for (const auto& f : schema.fields()) convert.column_types[f.name] = arrow::utf8();
    convert.strings_can_be_null = true;
    SKADE_ARROW_ASSIGN(auto reader,
                       arrow::csv::StreamingReader::Make(arrow::io::default_io_context(), file, read, parse, convert),
                       path);
    return std::shared_ptr<arrow::RecordBatchReader>(std::move(reader));
  }
  if (ext == ".jsonl" || ext == ".json" || ext == ".ndjson") {
    auto read = arrow::json::ReadOptions::Defaults();
    auto parse = arrow::json::ParseOptions::Defaults();
    arrow::FieldVector fields;
    for (const auto& f : schema.fields())
      if (ParsesDirectly(*f.type)) fields.push_back(arrow::field(f.name, ToArrowType(*f.type)));
      else if (f.type->is_primitive()) fields.push_back(arrow::field(f.name, arrow::utf8()));
    parse.explicit_schema = arrow::schema(fields);
    parse.unexpected_field_behavior = arrow::json::UnexpectedFieldBehavior::InferType;
    SKADE_ARROW_ASSIGN(auto reader, arrow::json::StreamingReader::Make(file, read, parse), path);
    return std::shared_ptr<arrow::RecordBatchReader>(std::move(reader));
  }
  return InvalidArgument("cannot tell the format of '" + path +
                         "' (expected .parquet, .csv, .jsonl, .json or .ndjson)");
}

}  // namespace skade::cli
