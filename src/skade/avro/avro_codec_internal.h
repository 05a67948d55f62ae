// Private to the Avro codec: block compression for the container codecs.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "skade/avro/avro.h"
#include "skade/common/result.h"

namespace skade::avro::internal {

/// Compresses one container block payload. Errors: kInternal if the library fails.
Status Compress(Codec codec, std::string_view in, std::string* out);

/// Decompresses one block payload into `*out`, refusing to produce more than `max_out`
/// bytes (bounds memory on hostile input). Errors: kCorrupt.
Status Decompress(Codec codec, std::string_view in, size_t max_out, std::string* out);

}  // namespace skade::avro::internal
