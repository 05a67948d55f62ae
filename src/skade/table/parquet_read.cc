#include "skade/table/parquet_read.h"

#include <arrow/table.h>
#include <parquet/arrow/reader.h>
#include <parquet/arrow/schema.h>

#include "skade/io/file_io.h"
#include "skade/table/arrow_internal.h"

namespace skade {

void CollectLeaves(const parquet::arrow::SchemaField& f, std::vector<int>* out) {
  if (f.is_leaf()) out->push_back(f.column_index);
  for (const auto& c : f.children) CollectLeaves(c, out);
}

Result<std::shared_ptr<arrow::Table>> ReadWholeParquet(const std::string& location,
                                                       std::optional<int64_t> expected_rows,
                                                       const std::function<bool(const arrow::Field&)>& keep) {
  std::string path = LocalPath(location);
  parquet::arrow::FileReaderBuilder builder;
  auto st = builder.OpenFile(path);
  if (!st.ok()) return Corrupt(path + ": " + st.message());
  SKADE_ARROW_ASSIGN(auto reader, builder.Build(), path);
  std::vector<int> leaves;
  if (keep) {
    for (const auto& field : reader->manifest().schema_fields)
      if (keep(*field.field)) CollectLeaves(field, &leaves);
  }
  auto read = keep ? reader->ReadTable(leaves) : reader->ReadTable();
  if (!read.ok()) return Corrupt(path + ": " + read.status().message());
  std::shared_ptr<arrow::Table> table = *std::move(read);
  if (expected_rows && table->num_rows() != *expected_rows)
    return Corrupt("file " + path + " holds " + std::to_string(table->num_rows()) +
                   " rows but its manifest entry says " + std::to_string(*expected_rows) +
                   ": the file was changed after it was committed");
  return table;
}

}  // namespace skade
