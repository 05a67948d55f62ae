#include "bifrost/source/parquet_folder_source.h"

#include <arrow/api.h>
#include <parquet/arrow/reader.h>

#include <algorithm>
#include <filesystem>

#include "skade/table/arrow_internal.h"
#include "skade/table/arrow_schema.h"
#include "skade/table/parquet_read.h"

namespace bifrost {
namespace {

namespace fs = std::filesystem;

}  // namespace

std::string ParquetFolderSource::TableFolders() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(root_, ec))
    if (e.is_directory()) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out.empty() ? "none" : out;
}

Result<std::vector<std::string>> ParquetFolderSource::Files(const std::string& table) {
  fs::path dir = fs::path(root_) / table;
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    return skade::NotFound("drop folder " + dir.string() + " does not exist (tables in " + root_ +
                           ": " + TableFolders() + ")");
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.is_regular_file() && e.path().extension() == ".parquet")
      files.push_back(e.path().filename().string());
  std::sort(files.begin(), files.end());
  return files;
}

Result<std::shared_ptr<const skade::Schema>> ParquetFolderSource::SchemaOf(
    const std::string& table) {
  SKADE_ASSIGN_OR_RETURN(auto files, Files(table));
  if (files.empty())
    return skade::NotFound("drop folder " + (fs::path(root_) / table).string() +
                           " holds no .parquet file yet");
  std::string first = (fs::path(root_) / table / files[0]).string();
  parquet::arrow::FileReaderBuilder builder;
  SKADE_ARROW_RETURN(builder.OpenFile(first), first);
  SKADE_ARROW_ASSIGN(auto reader, builder.Build(), first);
  std::shared_ptr<arrow::Schema> arrow_schema;
  SKADE_ARROW_RETURN(reader->GetSchema(&arrow_schema), first);
  auto schema = skade::FromArrowSchema(*arrow_schema);
  if (!schema) return std::unexpected(schema.error().WithContext(first));
  return schema;
}

Result<std::optional<Fetched>> ParquetFolderSource::FetchNew(const CompiledTable& ct,
                                                             const TableState& state) {
  const std::string table = ct.spec.table;
  if (ct.spec.mode == SyncMode::kCdc)
    return skade::Unsupported("table '" + table +
                              "': a Parquet drop folder has no changelog; mode cdc needs a " +
                              "skade warehouse table (use full or incremental)");
  SKADE_ASSIGN_OR_RETURN(auto files, Files(table));
  std::vector<std::string> fresh;
  for (const auto& f : files)
    if (std::find(state.done_files.begin(), state.done_files.end(), f) == state.done_files.end())
      fresh.push_back(f);
  if (fresh.empty() && !state.done_files.empty()) return std::nullopt;
  const auto& to_read = ct.spec.mode == SyncMode::kFull ? files : fresh;
  std::vector<std::shared_ptr<arrow::Table>> parts;
  for (const auto& f : to_read) {
    SKADE_ASSIGN_OR_RETURN(auto t, skade::ReadWholeParquet((fs::path(root_) / table / f).string()));
    if (!ct.projection.empty()) {
      std::vector<int> idx;
      for (const auto& c : ct.projection) {
        int i = t->schema()->GetFieldIndex(c);
        if (i < 0)
          return skade::InvalidArgument("file " + f + " of drop folder " + table +
                                        " has no column '" + c + "'");
        idx.push_back(i);
      }
      SKADE_ARROW_ASSIGN(t, t->SelectColumns(idx), f);
    }
    parts.push_back(t);
  }
  Fetched out;
  out.next = state;
  out.next.done_files = files;
  out.description =
      std::to_string(to_read.size()) + " file(s) of " + (fs::path(root_) / table).string();
  if (parts.empty()) {
    out.rows = arrow::Table::MakeEmpty(arrow::schema({})).ValueOrDie();
  } else {
    SKADE_ARROW_ASSIGN(out.rows, arrow::ConcatenateTables(parts), "drop folder " + table);
  }
  if (state.done_files.empty() && out.rows->num_rows() == 0 && !ct.spec.allow_empty)
    return skade::InvalidArgument("table '" + table + "': empty read refused: " + out.description +
                                  " gave 0 rows (set allow_empty: true to accept; tables in " +
                                  root_ + ": " + TableFolders() + ")");
  return out;
}

}  // namespace bifrost
