// Opening input files for append: Parquet, CSV, JSON lines.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "skade/common/result.h"
#include "skade/format/types.h"

namespace arrow {
class RecordBatchReader;
}

namespace skade::cli {

/// Text inputs are read in blocks of this many bytes; a row longer than a block is
/// read again with a larger one (ReadInGrowingBlocks), up to kMaxInputBlockBytes.
inline constexpr int64_t kInputBlockBytes = 4 << 20;
inline constexpr int64_t kMaxInputBlockBytes = 1LL << 30;

/// A streaming reader of `path`, chosen by extension (.parquet, .csv, .tsv/.tab,
/// .jsonl/.json/.ndjson), or by `format` when given (one of kInputFormats). CSV and JSON columns that the table schema names are parsed as
/// its types. CSV fields are separated by `delimiter`, else by commas (tabs in a .tsv or
/// .tab file).
/// With `only`, a Parquet input decodes only the columns `only` names, and a CSV input's
/// nested cells stay text (`only` names identifier columns, which are never nested; JSON
/// parses every column either way). Errors: kInvalidArgument (unknown
/// extension, a column named twice, JSON nested deeper than kMaxJsonDepth), kNotFound,
/// kCorrupt naming the file.
Result<std::shared_ptr<arrow::RecordBatchReader>> OpenInput(const std::string& path, const Schema& schema,
                                                            int64_t block_bytes = kInputBlockBytes,
                                                            const Schema* only = nullptr, char delimiter = 0,
                                                            const std::string& format = "");

/// The names `--input-format` takes.
inline constexpr std::array<std::string_view, 5> kInputFormats = {"parquet", "csv", "tsv", "jsonl", "json"};
/// kInputFormats as a user reads them: "parquet, csv, ...".
std::string InputFormatNames();

/// A write's FILE arguments, where `-` is standard input: copied to a temporary file
/// (`stdin.FORMAT` in a folder of its own under $TMPDIR, else /tmp) before anything is
/// read, since an upsert reads its input twice. The copy goes with this object.
class InputFiles {
 public:
  /// Errors: kInvalidArgument when `-` comes without a format or more than once, or the
  /// format is not one of kInputFormats; kIoError when the copy cannot be written.
  static Result<std::unique_ptr<InputFiles>> Make(const std::vector<std::string>& args, const std::string& format);
  ~InputFiles();
  const std::vector<std::string>& paths() const { return paths_; }
  /// `s` with the copy's path in its message read as "standard input".
  Status Named(Status s) const;
  /// How to name one of paths() to a user: the copy as "standard input".
  std::string Shown(const std::string& path) const { return path == copy_ ? "standard input" : path; }

 private:
  std::vector<std::string> paths_;
  std::string copy_;  // the copy of standard input, if any
};

/// Runs `read` (which reads an input in blocks of the size it is given) with
/// kInputBlockBytes, and again with blocks four times as large while it fails on a row
/// longer than its block, up to kMaxInputBlockBytes; its other errors are returned.
Status ReadInGrowingBlocks(const std::function<Status(int64_t block_bytes)>& read);

}  // namespace skade::cli
