// Bifröst's columnar batch layout for WASM guests (README, "WASM guests"; the guest side
// is examples/wasm/bifrost_guest.h): Arrow columns to the bytes written into a guest's
// memory, and the bytes of a guest's reply back to Arrow.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "skade/common/result.h"

namespace arrow {
class Table;
}

namespace bifrost {

/// Integers go as int64, floats as float64, strings as utf8, booleans as bool.
/// Errors: kInvalidArgument naming a column of any other type, or rows past 4 GiB.
skade::Result<std::string> EncodeBatch(const arrow::Table& table);

/// Reads a batch of `len` bytes; every offset and length is checked against `len`.
/// Errors: kInvalidArgument "the guest's reply is not a batch: ..." naming what is wrong.
skade::Result<std::shared_ptr<arrow::Table>> DecodeBatch(const uint8_t* p, uint64_t len);

}  // namespace bifrost
