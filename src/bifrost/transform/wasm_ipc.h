// The bytes that cross into and out of a WASM guest's memory (README, "WASM guests"; the
// guest side is examples/wasm/arrow_ipc_guest.h): Arrow IPC streams, one schema message,
// one record batch and the end-of-stream marker going in; the guest's reply read back
// with Arrow's own stream reader and checked to the last offset.
#pragma once

#include <cstdint>
#include <memory>

#include "skade/common/result.h"

namespace arrow {
class Buffer;
class Table;
}  // namespace arrow

namespace bifrost {

/// The rows as one IPC stream (schema, one record batch, end-of-stream). int32, int64,
/// float64, bool and utf8 columns go as they are; other integers widen to int64, float32
/// to float64, large strings to utf8.
/// Errors: kInvalidArgument naming a column of any other type, or rows past 4 GiB.
skade::Result<std::shared_ptr<arrow::Buffer>> EncodeGuestInput(const arrow::Table& table);

/// Reads a guest's reply of `len` bytes (copied first: the guest's memory dies with its
/// store): an IPC stream of one schema and any number of record batches, each validated
/// in full (offsets, UTF-8, buffer bounds), with nothing after its end.
/// Errors: kInvalidArgument "the guest's reply is not an Arrow IPC stream: ..." naming
/// what is wrong.
skade::Result<std::shared_ptr<arrow::Table>> DecodeGuestReply(const uint8_t* p, uint64_t len);

}  // namespace bifrost
