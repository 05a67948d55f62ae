// Arrow IPC streams into and out of WASM guests (README, "WASM guests"), the host side.
#include "bifrost/transform/wasm_ipc.h"

#include <arrow/api.h>
#include <arrow/compute/api.h>
#include <arrow/io/memory.h>
#include <arrow/ipc/reader.h>
#include <arrow/ipc/writer.h>

#include <algorithm>
#include <cstring>

#include "skade/table/arrow_internal.h"

namespace bifrost {

using skade::Result;

namespace {

// The type a column goes to the guest as (one of the five a small guest decodes), or null
// when it cannot go.
std::shared_ptr<arrow::DataType> GuestType(const std::shared_ptr<arrow::DataType>& t) {
  switch (t->id()) {
    case arrow::Type::INT32:
    case arrow::Type::INT64:
    case arrow::Type::DOUBLE:
    case arrow::Type::BOOL:
    case arrow::Type::STRING:
      return t;
    case arrow::Type::LARGE_STRING:
      return arrow::utf8();
    case arrow::Type::FLOAT:
      return arrow::float64();
    default:
      return arrow::is_integer(t->id()) ? arrow::int64() : nullptr;
  }
}

// Arrow's messages sometimes span lines; a round error is one.
std::string OneLine(std::string s) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  return s;
}

}  // namespace

Result<std::shared_ptr<arrow::Buffer>> EncodeGuestInput(const arrow::Table& table) {
  SKADE_ARROW_ASSIGN(auto batch, table.CombineChunksToBatch(), "combining the step's rows");
  arrow::FieldVector fields;
  arrow::ArrayVector columns;
  for (int i = 0; i < batch->num_columns(); ++i) {
    auto column = batch->column(i);
    const auto& field = batch->schema()->field(i);
    auto as = GuestType(column->type());
    if (!as)
      return skade::InvalidArgument(
          "column '" + field->name() + "' has type " + column->type()->ToString() +
          ", which a WASM guest cannot be given (integers, floats, strings, booleans); leave it "
          "out of the step's 'columns'");
    if (!as->Equals(*column->type())) {
      skade::InitArrowCompute();
      SKADE_ARROW_ASSIGN(auto cast, arrow::compute::Cast(column, as), "column " + field->name());
      column = cast.make_array();
    }
    fields.push_back(field->WithType(column->type()));
    columns.push_back(std::move(column));
  }
  auto sent = arrow::RecordBatch::Make(arrow::schema(fields), batch->num_rows(), columns);
  SKADE_ARROW_ASSIGN(auto sink, arrow::io::BufferOutputStream::Create(), "encoding the rows");
  SKADE_ARROW_ASSIGN(auto writer, arrow::ipc::MakeStreamWriter(sink, sent->schema()),
                     "encoding the rows");
  SKADE_ARROW_RETURN(writer->WriteRecordBatch(*sent), "encoding the rows");
  SKADE_ARROW_RETURN(writer->Close(), "encoding the rows");  // writes the end-of-stream marker
  SKADE_ARROW_ASSIGN(auto bytes, sink->Finish(), "encoding the rows");
  if (bytes->size() > INT32_MAX)
    return skade::InvalidArgument("the rows (" + std::to_string(bytes->size() >> 20) +
                                  " MiB as Arrow IPC) exceed the 2 GiB a WASM guest is given");
  return bytes;
}

Result<std::shared_ptr<arrow::Table>> DecodeGuestReply(const uint8_t* p, uint64_t len) {
  auto bad = [](const std::string& what) {
    return skade::InvalidArgument("the guest's reply is not an Arrow IPC stream: " + OneLine(what));
  };
  if (len == 0) return bad("it is empty");
  // An aligned copy: Arrow reads the buffers in place, and the guest's memory goes away.
  SKADE_ARROW_ASSIGN(std::shared_ptr<arrow::Buffer> bytes,
                     arrow::AllocateBuffer(static_cast<int64_t>(len)), "copying the guest's reply");
  std::memcpy(bytes->mutable_data(), p, len);
  auto input = std::make_shared<arrow::io::BufferReader>(bytes);
  auto options = arrow::ipc::IpcReadOptions::Defaults();
  options.use_threads = false;
  auto reader = arrow::ipc::RecordBatchStreamReader::Open(input, options);
  if (!reader.ok()) return bad(reader.status().message());
  arrow::RecordBatchVector batches;
  while (true) {
    auto batch = (*reader)->Next();
    if (!batch.ok()) return bad(batch.status().message());
    if (!*batch) break;
    // The reader checks the framing and each buffer against the body; offsets into
    // the buffers, UTF-8 and bitmaps only a full validation sees.
    if (auto st = (*batch)->ValidateFull(); !st.ok())
      return bad("batch " + std::to_string(batches.size()) + ": " + st.message());
    batches.push_back(std::move(*batch));
  }
  auto at = input->Tell();
  if (at.ok() && static_cast<uint64_t>(*at) < len)
    return bad(std::to_string(len - *at) + " bytes follow its end-of-stream marker");
  auto table = arrow::Table::FromRecordBatches((*reader)->schema(), batches);
  if (!table.ok()) return bad(table.status().message());
  return *table;
}

}  // namespace bifrost
