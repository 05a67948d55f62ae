#include "output.h"

#include <arrow/api.h>
#include <arrow/util/byte_size.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <optional>

#include "skade/common/csv.h"
#include "skade/common/json_text.h"
#include "skade/common/task_pool.h"
#include "skade/format/value.h"
#include "skade/table/arrow_internal.h"
#include "skade/table/arrow_schema.h"
#include "skade/table/arrow_values.h"
#include "skade/table/data_file_sink.h"
#include "skade/table/data_writer.h"
#include "skade/table/scan.h"

namespace skade::cli {
namespace {

// A row group is closed every this many bytes of input: its encoded pages are held until then.
constexpr int64_t kOutputRowGroupBytes = 64LL << 20;
// Rows of the table format aligned together; a later block's wider values widen their columns.
constexpr size_t kTableBlockRows = 10000;

template <typename T>
void AppendNumber(T v, std::string* out) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out->append(buf, r.ptr);
}

// The common primitive columns straight from their arrays (no Value in between);
// false for the others. Same text as the general path.
bool AppendPlainJson(const arrow::Array& a, int64_t i, const Type& type, std::string* out) {
  switch (a.type_id()) {
    case arrow::Type::INT32:
      if (type.id != TypeId::kInt && type.id != TypeId::kLong) return false;
      AppendNumber(static_cast<const arrow::Int32Array&>(a).Value(i), out);
      return true;
    case arrow::Type::INT64:
      if (type.id != TypeId::kLong) return false;
      AppendNumber(static_cast<const arrow::Int64Array&>(a).Value(i), out);
      return true;
    case arrow::Type::DOUBLE: {
      double v = static_cast<const arrow::DoubleArray&>(a).Value(i);
      if (type.id != TypeId::kDouble || !std::isfinite(v)) return false;
      AppendNumber(v, out);
      return true;
    }
    case arrow::Type::FLOAT: {
      float v = static_cast<const arrow::FloatArray&>(a).Value(i);
      if (type.id != TypeId::kFloat || !std::isfinite(v)) return false;
      AppendNumber(v, out);
      return true;
    }
    case arrow::Type::STRING:
      if (type.id != TypeId::kString) return false;
      AppendJsonString(static_cast<const arrow::StringArray&>(a).GetView(i), out);
      return true;
    case arrow::Type::BOOL:
      if (type.id != TypeId::kBoolean) return false;
      *out += static_cast<const arrow::BooleanArray&>(a).Value(i) ? "true" : "false";
      return true;
    default: return false;
  }
}

bool IsNumeric(TypeId id) {
  return id == TypeId::kInt || id == TypeId::kLong || id == TypeId::kFloat || id == TypeId::kDouble;
}

// Appends the JSON form of one value (nested types recurse).
void AppendJson(const arrow::Array& a, int64_t i, const Type& type, std::string* out) {
  if (a.IsNull(i)) {
    *out += "null";
    return;
  }
  switch (type.id) {
    case TypeId::kStruct: {
      const auto& sa = static_cast<const arrow::StructArray&>(a);
      *out += '{';
      for (int k = 0; k < sa.num_fields() && k < static_cast<int>(type.fields.size()); ++k) {
        if (k) *out += ',';
        AppendJsonString(type.fields[k].name, out);
        *out += ':';
        AppendJson(*sa.field(k), i, *type.fields[k].type, out);
      }
      *out += '}';
      return;
    }
    case TypeId::kList: {
      const auto& la = static_cast<const arrow::ListArray&>(a);
      *out += '[';
      for (int64_t k = la.value_offset(i); k < la.value_offset(i) + la.value_length(i); ++k) {
        if (k != la.value_offset(i)) *out += ',';
        AppendJson(*la.values(), k, *type.element().type, out);
      }
      *out += ']';
      return;
    }
    case TypeId::kMap: {
      const auto& ma = static_cast<const arrow::MapArray&>(a);
      *out += '{';
      for (int64_t k = ma.value_offset(i); k < ma.value_offset(i) + ma.value_length(i); ++k) {
        if (k != ma.value_offset(i)) *out += ',';
        std::string key;
        AppendJson(*ma.keys(), k, *type.key().type, &key);
        if (key.empty() || key[0] != '"') AppendJsonString(key, out);
        else *out += key;
        *out += ':';
        AppendJson(*ma.items(), k, *type.value().type, out);
      }
      *out += '}';
      return;
    }
    default: {
      if (AppendPlainJson(a, i, type, out)) return;
      auto v = ValueAt(a, i, type);
      if (!v) {
        *out += "null";
        return;
      }
      if (type.id == TypeId::kBoolean) *out += std::get<bool>(*v) ? "true" : "false";
      else if (IsNumeric(type.id)) {
        // JSON has no NaN or infinities: they go as strings ("NaN", "Infinity"), as Spark writes them.
        std::string t = FormatValue(type, *v);
        if (t.find_first_of("nNiI") != std::string::npos) AppendJsonString(t, out);
        else *out += t;
      } else {
        AppendJsonString(FormatValue(type, *v), out);
      }
    }
  }
}

std::string CellText(const arrow::Array& a, int64_t i, const Type& type) {
  if (a.IsNull(i)) return "";
  if (type.is_nested()) {
    std::string s;
    AppendJson(a, i, type, &s);
    return s;
  }
  auto v = ValueAt(a, i, type);
  return v ? FormatValue(type, *v) : "?";
}

// Appends one cell as a CSV field, the text CellText gives; strings and the common
// primitives straight from their arrays. A column not in the schema shows as "?".
void AppendCsvCell(const arrow::Array& a, int64_t i, const NestedField* field, std::string* out) {
  if (!field) {
    *out += '?';
    return;
  }
  if (a.IsNull(i)) return;  // null: an empty field; an empty string: "" (as append reads them)
  if (a.type_id() == arrow::Type::STRING && field->type->id == TypeId::kString) {
    auto text = static_cast<const arrow::StringArray&>(a).GetView(i);
    if (text.empty()) *out += "\"\"";
    else AppendCsvField(text, out);
    return;
  }
  if (a.type_id() != arrow::Type::STRING && AppendPlainJson(a, i, *field->type, out)) return;
  AppendCsvField(CellText(a, i, *field->type), out);
}

const NestedField* FieldFor(const arrow::Field& f, const Schema& schema) {
  int id = FieldIdOf(f);
  if (id >= 0)
    if (const NestedField* nf = schema.FindField(id)) return nf;
  return schema.FindTopLevel(f.name());
}

// A cell is shown in at most this many characters (longer ones end in "...").
constexpr size_t kCellChars = 80;

// Widths and cuts count characters (UTF-8 code points), not bytes: a cut never splits a
// character, and columns of non-ASCII text line up.
size_t Chars(std::string_view text) {
  size_t n = 0;
  for (char ch : text) n += (static_cast<unsigned char>(ch) & 0xC0) != 0x80;
  return n;
}

// The first `chars` characters of `text`.
std::string_view FirstChars(std::string_view text, size_t chars) {
  size_t seen = 0;
  for (size_t i = 0; i < text.size(); ++i)
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80 && seen++ == chars) return text.substr(0, i);
  return text;
}

// A cell's text as shown: what PrintAligned would print of it, so a block keeps no more.
std::string Clipped(std::string text) {
  // One character more than shown: still longer, so PrintAligned cuts it.
  if (text.size() > kCellChars) text.resize(FirstChars(text, kCellChars + 1).size());
  return text;
}

// A listing's rows as aligned text (after its header and a rule, with `header`). `width`
// holds each column's width and only grows: blocks printed one after another stay
// aligned unless a later value needs more room.
void PrintAligned(const Listing& l, bool header, std::vector<size_t>* width, std::FILE* out) {
  std::vector<size_t>& w = *width;
  w.resize(l.headers.size(), 0);
  for (size_t c = 0; c < l.headers.size(); ++c) w[c] = std::max(w[c], Chars(l.headers[c]));
  for (const auto& row : l.rows)
    for (size_t c = 0; c < row.size(); ++c) w[c] = std::max(w[c], std::min(Chars(row[c]), kCellChars));
  auto line = [&](const std::vector<std::string>& cells) {
    std::string s;
    for (size_t c = 0; c < cells.size(); ++c) {
      const size_t chars = Chars(cells[c]);
      std::string cell = chars > kCellChars ? std::string(FirstChars(cells[c], kCellChars - 3)) + "..." : cells[c];
      s += (c ? "  " : "") + cell;
      if (c + 1 < cells.size()) s += std::string(w[c] - std::min(w[c], std::min(chars, kCellChars)), ' ');
    }
    std::fprintf(out, "%s\n", s.c_str());
  };
  if (header) {
    line(l.headers);
    std::vector<std::string> rule;
    for (size_t n : w) rule.push_back(std::string(n, '-'));
    line(rule);
  }
  for (const auto& row : l.rows) line(row);
}

}  // namespace

Result<Format> ParseFormat(const std::string& name, bool data) {
  if (name == "table") return Format::kTable;
  if (name == "csv") return Format::kCsv;
  if (name == "jsonl" || name == "json") return Format::kJsonl;
  if (data && name == "parquet") return Format::kParquet;
  if (data && name == "none") return Format::kNone;
  return InvalidArgument("unknown format '" + name + "' (use " +
                         (data ? "table, csv, jsonl, parquet or none" : "table, csv or jsonl") + ")");
}

void PrintListing(const Listing& l, Format format, std::FILE* out) {
  if (format == Format::kCsv) {
    for (size_t c = 0; c < l.headers.size(); ++c)
      std::fprintf(out, "%s%s", c ? "," : "", CsvField(l.headers[c]).c_str());
    std::fputc('\n', out);
    for (const auto& row : l.rows) {
      for (size_t c = 0; c < row.size(); ++c) std::fprintf(out, "%s%s", c ? "," : "", CsvField(row[c]).c_str());
      std::fputc('\n', out);
    }
    return;
  }
  if (format == Format::kJsonl) {
    for (const auto& row : l.rows) {
      std::string s = "{";
      for (size_t c = 0; c < row.size(); ++c) {
        if (c) s += ',';
        AppendJsonString(l.headers[c], &s);
        s += ':';
        bool num = c < l.numeric.size() && l.numeric[c];
        bool json = c < l.json.size() && l.json[c];
        if ((num || json) && !row[c].empty()) s += row[c];
        else if (num) s += "null";
        else AppendJsonString(row[c], &s);
      }
      std::fprintf(out, "%s}\n", s.c_str());
    }
    return;
  }
  std::vector<size_t> width;
  PrintAligned(l, /*header=*/true, &width, out);
  if (l.rows.empty()) std::fprintf(out, "(none)\n");  // a bare header reads like a cut-off listing
}

std::string TimeText(int64_t ms) {
  return FormatValue(*Type::Primitive(TypeId::kTimestampTz), Value{ms * 1000});
}

namespace {

// What formatting a batch's rows needs, looked up once per batch: its columns (a
// column looked up per cell took a lock each time), their table fields (null: not in
// the schema) and their JSON keys.
struct RowFormat {
  std::vector<const arrow::Array*> columns;
  std::vector<const NestedField*> fields;
  std::vector<std::string> keys;  // "name":
};

RowFormat FormatFor(const arrow::RecordBatch& batch, const Schema& schema) {
  RowFormat f;
  for (int c = 0; c < batch.num_columns(); ++c) {
    f.columns.push_back(batch.column(c).get());
    f.fields.push_back(FieldFor(*batch.schema()->field(c), schema));
    std::string key;
    AppendJsonString(batch.schema()->field(c)->name(), &key);
    f.keys.push_back(key + ':');
  }
  return f;
}

void AppendRowJson(const RowFormat& f, int64_t row, std::string* s) {
  *s += '{';
  for (size_t c = 0; c < f.columns.size(); ++c) {
    if (c) *s += ',';
    *s += f.keys[c];
    if (f.fields[c]) AppendJson(*f.columns[c], row, *f.fields[c]->type, s);
    else *s += "null";
  }
  *s += '}';
}

// Appends a batch as CSV or JSON lines text.
void FormatRows(const arrow::RecordBatch& batch, const Schema& schema, Format format, std::string& text) {
  RowFormat f = FormatFor(batch, schema);
  for (int64_t r = 0; r < batch.num_rows(); ++r) {
    if (format == Format::kJsonl) {
      AppendRowJson(f, r, &text);
    } else {
      for (size_t c = 0; c < f.columns.size(); ++c) {
        if (c) text += ',';
        AppendCsvCell(*f.columns[c], r, f.fields[c], &text);
      }
    }
    text += '\n';
  }
}

// CSV or JSON lines of a scan, formatted a few batches at once on the pool (formatting,
// not decoding, is where a text export spent its time: one core for 1M rows of 11
// columns) and written in scan order as soon as each text and those before it are done,
// by whichever thread finished last (`skade watch` prints each change as it comes).
// Memory: at most one batch per worker, and no more than kTextAheadBytes of them, is held
// with its text; the texts' buffers are reused (fresh ones for every batch spent more
// time in page faults than in formatting). Text goes to `file` (an --output, written as
// data files are: O_DIRECT where the file system takes it, sparing the page cache
// hundreds of MB of fresh pages) or to `out`.
class TextOutput {
 public:
  static constexpr int64_t kTextAheadBytes = 32LL << 20;
  TextOutput(Format format, const Schema& schema, std::FILE* out, std::shared_ptr<DataFileSink> file)
      : format_(format), schema_(schema), out_(out), file_(std::move(file)) {}
  TextOutput(const TextOutput&) = delete;
  TextOutput& operator=(const TextOutput&) = delete;
  ~TextOutput() {  // the tasks read the schema: none may outlive it
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return jobs_.empty(); });
  }

  void Add(std::shared_ptr<arrow::RecordBatch> batch) {
    auto job = std::make_shared<Job>();
    // A batch is often a slice of a row group's arrays: only the bytes it refers to count.
    auto referenced = arrow::util::ReferencedBufferSize(*batch);
    job->bytes = referenced.ok() ? *referenced : arrow::util::TotalBufferSize(*batch);
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] {
        return jobs_.empty() || (jobs_.size() < std::max<size_t>(2, TaskPool::Shared().size()) &&
                                 ahead_bytes_ + job->bytes <= kTextAheadBytes);
      });
      ahead_bytes_ += job->bytes;
      if (!spare_.empty()) {
        job->text = std::move(spare_.back());
        spare_.pop_back();
      }
      jobs_.push_back(job);
    }
    TaskPool::Shared().Submit([this, job, batch = std::move(batch)] {
      FormatRows(*batch, schema_, format_, job->text);  // the job's alone until done
      {
        std::lock_guard lock(mu_);
        job->done = true;
        while (!jobs_.empty() && jobs_.front()->done) {
          Job& first = *jobs_.front();
          PutLocked(first.text);
          ahead_bytes_ -= first.bytes;
          first.text.clear();
          spare_.push_back(std::move(first.text));
          jobs_.pop_front();
        }
      }
      cv_.notify_all();
    });
  }

  // Writes what is not formatted by the pool (a CSV header).
  void Put(std::string_view text) {
    std::lock_guard lock(mu_);
    PutLocked(text);
  }

  /// Writes every batch added, then ends the file.
  arrow::Status Finish() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return jobs_.empty(); });
    if (file_ && written_.ok()) written_ = file_->Finish();
    if (file_ && written_.ok()) written_ = file_->Close();
    return written_;
  }

  /// The first failed write to the file (writes to `out` are checked with ferror).
  arrow::Status written() {
    std::lock_guard lock(mu_);
    return written_;
  }
  /// The reason of the first failed write to `out` (0: none, or not known).
  int out_errno() {
    std::lock_guard lock(mu_);
    return out_errno_;
  }

 private:
  struct Job {
    bool done = false;  // guarded by mu_
    std::string text;
    int64_t bytes = 0;  // the batch's
  };

  void PutLocked(std::string_view text) {
    if (!file_) {
      // errno is the writing thread's: kept for the reading thread's message.
      if (std::fwrite(text.data(), 1, text.size(), out_) != text.size() && out_errno_ == 0) out_errno_ = errno;
    } else if (written_.ok()) {
      written_ = file_->Write(text.data(), static_cast<int64_t>(text.size()));
    }
  }

  const Format format_;
  const Schema& schema_;
  std::FILE* const out_;
  const std::shared_ptr<DataFileSink> file_;
  std::mutex mu_;  // guards what follows, and the writes
  std::condition_variable cv_;
  arrow::Status written_;
  int out_errno_ = 0;
  std::deque<std::shared_ptr<Job>> jobs_;  // in scan order, not yet written
  std::vector<std::string> spare_;         // written texts' buffers, emptied
  int64_t ahead_bytes_ = 0;
};

}  // namespace

std::string RowToJson(const arrow::RecordBatch& batch, int64_t row, const Schema& schema) {
  std::string s;
  AppendRowJson(FormatFor(batch, schema), row, &s);
  return s;
}

Result<int64_t> WriteScan(arrow::RecordBatchReader& reader, const Schema& schema, Format format,
                          std::FILE* out, const std::string& output_path, bool progress) {
  int64_t rows = 0;
  std::unique_ptr<ParquetExport> pq;
  if (format == Format::kParquet) {
    if (output_path.empty()) return InvalidArgument("--format parquet needs --output FILE");
    SKADE_ASSIGN_OR_RETURN(pq, ParquetExport::Open(output_path, reader.schema(), kOutputRowGroupBytes));
  }
  std::optional<TextOutput> text;
  if (format == Format::kCsv || format == Format::kJsonl) {
    std::shared_ptr<DataFileSink> file;
    if (!output_path.empty()) {
      SKADE_ARROW_ASSIGN(file, DataFileSink::Open(output_path), output_path);
    }
    text.emplace(format, schema, out, std::move(file));
  }
  // Stop at the first failed write (a full disk, a reader gone) instead of formatting
  // the rest of the table for nobody.
  auto write_failed = [&]() -> Status {
    if (auto w = text ? text->written() : arrow::Status::OK(); !w.ok())
      return std::unexpected(FromArrow(w, "writing " + output_path));
    if (!out || !std::ferror(out)) return {};
    int e = text ? text->out_errno() : 0;
    if (e == 0) e = errno;
    return IoError(std::string("writing ") + (output_path.empty() ? "standard output" : output_path) +
                   " failed: " + std::strerror(e ? e : EIO));
  };
  // The table format is printed a block of rows at a time, so its memory is a block's.
  Listing table_out;
  for (const auto& f : reader.schema()->fields()) table_out.headers.push_back(f->name());
  std::vector<size_t> table_width;
  bool table_started = false;
  auto print_block = [&] {
    PrintAligned(table_out, !table_started, &table_width, out);
    table_started = true;
    table_out.rows.clear();
  };
  // A CSV has its header even when no row follows.
  if (format == Format::kCsv) {
    std::string header;
    for (size_t c = 0; c < table_out.headers.size(); ++c) {
      if (c) header += ',';
      AppendCsvField(table_out.headers[c], &header);
    }
    text->Put(header + '\n');
  }
  while (true) {
    std::shared_ptr<arrow::RecordBatch> batch;
    auto st = reader.ReadNext(&batch);
    if (!st.ok()) return std::unexpected(ErrorFromReader(st));
    if (!batch) break;
    rows += batch->num_rows();
    if (progress) std::fprintf(stderr, "\r%lld rows read", static_cast<long long>(rows));
    switch (format) {
      case Format::kNone: break;
      case Format::kParquet: SKADE_RETURN_IF_ERROR(pq->Write(batch)); break;
      case Format::kJsonl:
      case Format::kCsv: text->Add(std::move(batch)); break;
      case Format::kTable:
        for (int64_t r = 0; r < batch->num_rows(); ++r) {
          std::vector<std::string> cells;
          for (int c = 0; c < batch->num_columns(); ++c) {
            const NestedField* f = FieldFor(*batch->schema()->field(c), schema);
            cells.push_back(f ? Clipped(CellText(*batch->column(c), r, *f->type)) : "?");
          }
          table_out.rows.push_back(std::move(cells));
          if (table_out.rows.size() == kTableBlockRows) print_block();
        }
        break;
    }
    SKADE_RETURN_IF_ERROR(write_failed());
  }
  if (text) {
    (void)text->Finish();  // its status is written()
    SKADE_RETURN_IF_ERROR(write_failed());
  }
  if (progress) std::fprintf(stderr, "\n");
  if (format == Format::kTable) {
    if (!table_started || !table_out.rows.empty()) print_block();
    std::fprintf(out, "(%lld %s)\n", static_cast<long long>(rows), rows == 1 ? "row" : "rows");
    SKADE_RETURN_IF_ERROR(write_failed());
  }
  if (pq) SKADE_RETURN_IF_ERROR(pq->Close());
  return rows;
}

}  // namespace skade::cli
