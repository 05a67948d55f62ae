// Avro object-container files: header (magic, metadata, sync) and data blocks.
#include <algorithm>
#include <chrono>
#include <exception>
#include <random>
#include <string>

#include "skade/avro/avro.h"
#include "skade/avro/avro_codec_internal.h"
#include "skade/avro/avro_internal.h"

namespace skade::avro {
namespace {

using internal::DecodeContext;
using internal::Reader;

constexpr std::string_view kMagic{"Obj\x01", 4};
constexpr size_t kSyncSize = 16;
/// Decompressed bytes a file may expand to: kExpansionFloor, or kMaxExpansion times the
/// file size, never more than kMaxDecompressed. Bounds memory on decompression bombs
/// (legitimate manifests compress far less than 256:1).
constexpr size_t kExpansionFloor = size_t{4} << 20;
constexpr size_t kMaxExpansion = 256;
constexpr size_t kMaxDecompressed = size_t{1} << 30;

std::string RandomSync() {
  std::string sync(kSyncSize, '\0');
  uint64_t seed;
  try {
    std::random_device rd;
    seed = (static_cast<uint64_t>(rd()) << 32) ^ rd();
  } catch (const std::exception&) {
    seed = static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  }
  std::mt19937_64 gen(seed ^ reinterpret_cast<uintptr_t>(&sync));
  for (size_t i = 0; i < kSyncSize; i += 8) {
    uint64_t r = gen();
    for (size_t j = 0; j < 8; ++j) sync[i + j] = static_cast<char>(r >> (8 * j));
  }
  return sync;
}

Result<std::map<std::string, std::string>> ReadMetadata(Reader& r) {
  std::map<std::string, std::string> meta;
  while (true) {
    SKADE_ASSIGN_OR_RETURN(int64_t count, r.ReadLong());
    if (count == 0) break;
    if (count < 0) {
      if (count == INT64_MIN) return Corrupt(r.At("metadata block count overflows"));
      count = -count;
      SKADE_ASSIGN_OR_RETURN(size_t skip, r.ReadLength("metadata block"));
      (void)skip;
    }
    // Each entry takes at least two length bytes; a larger count is a lie.
    if (static_cast<uint64_t>(count) > r.remaining() / 2) {
      return Corrupt(r.At("metadata count exceeds the header"));
    }
    for (int64_t i = 0; i < count; ++i) {
      SKADE_ASSIGN_OR_RETURN(std::string_view key, r.ReadBytes());
      SKADE_ASSIGN_OR_RETURN(std::string_view value, r.ReadBytes());
      meta.insert_or_assign(std::string(key), std::string(value));
    }
  }
  return meta;
}

Result<ContainerFile> ReadContainerImpl(std::string_view bytes) {
  if (bytes.size() < kMagic.size() || bytes.substr(0, kMagic.size()) != kMagic) {
    return Corrupt("not an Avro container (bad magic)");
  }
  Reader r(bytes, kMagic.size());
  ContainerFile file;
  auto metadata = ReadMetadata(r);
  if (!metadata) return std::unexpected(metadata.error().WithContext("header metadata"));
  file.metadata = std::move(*metadata);
  auto schema_it = file.metadata.find("avro.schema");
  if (schema_it == file.metadata.end()) return Corrupt("header lacks avro.schema");
  file.schema_json = schema_it->second;
  SKADE_ASSIGN_OR_RETURN(file.schema, ParseSchema(file.schema_json));
  Codec codec = Codec::kNull;
  if (auto it = file.metadata.find("avro.codec"); it != file.metadata.end()) {
    auto parsed = ParseCodec(it->second);
    if (!parsed) return Corrupt("unsupported codec '" + it->second + "'");
    codec = *parsed;
  }
  auto sync_read = r.ReadRaw(kSyncSize);
  if (!sync_read) return std::unexpected(sync_read.error().WithContext("header sync marker"));
  const std::string_view sync = *sync_read;

  const size_t budget =
      std::min(kMaxDecompressed,
               std::max(kExpansionFloor, std::min(bytes.size(), kMaxDecompressed) * kMaxExpansion));
  size_t decompressed_total = 0;
  const bool zero_width = internal::IsZeroWidth(*file.schema);
  DecodeContext ctx;
  std::string buffer;
  for (int block = 0; !r.at_end(); ++block) {
    auto block_ctx = [block](const Error& e) {
      return std::unexpected(e.WithContext("block " + std::to_string(block)));
    };
    auto count = r.ReadLong();
    if (!count) return block_ctx(count.error());
    if (*count < 0) return block_ctx(Error{ErrorKind::kCorrupt, "negative record count"});
    auto payload = r.ReadBytes();
    if (!payload) return block_ctx(payload.error());
    auto marker = r.ReadRaw(kSyncSize);
    if (!marker) return block_ctx(marker.error());
    if (*marker != sync) return block_ctx(Error{ErrorKind::kCorrupt, "sync marker mismatch"});

    std::string_view data = *payload;
    if (codec != Codec::kNull) {
      auto st = internal::Decompress(codec, data, budget - decompressed_total, &buffer);
      if (!st) return block_ctx(st.error());
      data = buffer;
      decompressed_total += data.size();
    }
    ctx.bytes_seen += data.size();
    // Records of a non-empty schema take at least a byte each.
    if (zero_width) {
      if (auto st = ctx.Charge(static_cast<uint64_t>(*count)); !st) return block_ctx(st.error());
    } else if (static_cast<uint64_t>(*count) > data.size()) {
      return block_ctx(Error{ErrorKind::kCorrupt, "record count " + std::to_string(*count) +
                                                      " exceeds the block's bytes"});
    }
    const size_t needed = file.records.size() + static_cast<size_t>(*count);
    if (file.records.capacity() < needed) {
      file.records.reserve(std::max(needed, 2 * file.records.capacity()));
    }
    Reader block_reader(data);
    for (int64_t i = 0; i < *count; ++i) {
      auto value = internal::DecodeValue(*file.schema, block_reader, ctx);
      if (!value) {
        return block_ctx(value.error().WithContext("record " + std::to_string(i)));
      }
      file.records.push_back(std::move(*value));
    }
    if (!block_reader.at_end()) {
      return block_ctx(Error{ErrorKind::kCorrupt, std::to_string(block_reader.remaining()) +
                                                      " stray bytes after records"});
    }
  }
  return file;
}

}  // namespace

Result<ContainerFile> ReadContainer(std::string_view bytes) {
  try {
    return ReadContainerImpl(bytes);
  } catch (const std::exception& e) {
    // Only std::bad_alloc can get here; report it rather than let it escape.
    return Corrupt(std::string("Avro container: ") + e.what());
  }
}

Result<std::string> WriteContainer(const Node& schema,
                                   const std::map<std::string, std::string>& metadata,
                                   const std::vector<Value>& records, Codec codec,
                                   size_t block_records) {
  if (block_records == 0) return InvalidArgument("block_records must be positive");
  std::string out(kMagic);
  const std::string schema_json = SchemaToJson(schema);
  const std::string_view codec_name = CodecName(codec);
  internal::WriteLong(static_cast<int64_t>(metadata.size() + 2), &out);
  internal::WriteBytes("avro.schema", &out);
  internal::WriteBytes(schema_json, &out);
  internal::WriteBytes("avro.codec", &out);
  internal::WriteBytes(codec_name, &out);
  for (const auto& [key, value] : metadata) {
    if (key.starts_with("avro.")) {
      return InvalidArgument("metadata key '" + key + "' is reserved for Avro");
    }
    internal::WriteBytes(key, &out);
    internal::WriteBytes(value, &out);
  }
  out.push_back('\0');
  const std::string sync = RandomSync();
  out += sync;

  std::string raw, compressed;
  for (size_t start = 0; start < records.size(); start += block_records) {
    const size_t end = std::min(records.size(), start + block_records);
    raw.clear();
    for (size_t i = start; i < end; ++i) {
      SKADE_RETURN_IF_ERROR_CTX(Encode(schema, records[i], &raw), "record " + std::to_string(i));
    }
    SKADE_RETURN_IF_ERROR(internal::Compress(codec, raw, &compressed));
    internal::WriteLong(static_cast<int64_t>(end - start), &out);
    internal::WriteBytes(compressed, &out);
    out += sync;
  }
  return out;
}

}  // namespace skade::avro
