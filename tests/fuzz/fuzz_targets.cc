// Definitions of the fuzz targets declared in fuzz_targets.h.
#include "fuzz_targets.h"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <string_view>

#include "skade/avro/avro.h"
#include "skade/avro/avro_internal.h"

namespace skade::fuzz {
namespace {

[[noreturn]] void Fail(const char* what, const std::string& detail = "") {
  std::fprintf(stderr, "fuzz invariant broken: %s %s\n", what, detail.c_str());
  std::abort();
}

}  // namespace

int FuzzAvroContainer(const uint8_t* data, size_t size) {
  namespace avro = skade::avro;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto file = avro::ReadContainer(bytes);
  if (!file) {
    if (file.error().kind != ErrorKind::kCorrupt) Fail("non-kCorrupt error", file.error().ToString());
    return 0;
  }
  std::map<std::string, std::string> user_meta;
  for (const auto& [k, v] : file->metadata) {
    if (!k.starts_with("avro.")) user_meta.emplace(k, v);
  }
  // Codec choice varies with the input so that every writer path gets exercised.
  auto codec = static_cast<avro::Codec>(size % 4);
  // Large decoded data may exceed the reader's decompression-bomb limit once recompressed
  // (ratios differ between codecs); the uncompressed codec has no such limit.
  size_t raw_size = 0;
  std::string scratch;
  for (const auto& record : file->records) {
    scratch.clear();
    if (!avro::Encode(*file->schema, record, &scratch)) Fail("Encode failed on a decoded record");
    raw_size += scratch.size();
  }
  if (raw_size > (size_t{4} << 20)) codec = avro::Codec::kNull;
  auto written = avro::WriteContainer(*file->schema, user_meta, file->records, codec, 3);
  if (!written) Fail("WriteContainer failed on decoded records", written.error().ToString());
  auto again = avro::ReadContainer(*written);
  if (!again) Fail("re-read failed", again.error().ToString());
  if (again->schema_json != avro::SchemaToJson(*file->schema)) Fail("schema changed");
  if (avro::SchemaToJson(*again->schema) != again->schema_json) Fail("schema JSON not stable");
  for (const auto& [k, v] : user_meta) {
    auto it = again->metadata.find(k);
    if (it == again->metadata.end() || it->second != v) Fail("metadata changed", k);
  }
  if (again->records.size() != file->records.size()) Fail("record count changed");
  for (size_t i = 0; i < file->records.size(); ++i) {
    if (!avro::internal::SameValue(file->records[i], again->records[i])) {
      Fail("record changed", std::to_string(i));
    }
  }
  return 0;
}

}  // namespace skade::fuzz
