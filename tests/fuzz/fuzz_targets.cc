// Definitions of the fuzz targets declared in fuzz_targets.h.
#include "fuzz_targets.h"

#include <arrow/api.h>

#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <map>
#include <string>
#include <string_view>

#include "bifrost/mapping/mapping.h"
#include "bifrost/transform/transform.h"
#include "bifrost/transform/wasm_ipc.h"
#include "skade/avro/avro.h"
#include "skade/avro/avro_internal.h"
#include "skade/expr/expression.h"
#include "skade/format/partition_spec.h"
#include "skade/format/manifest.h"
#include "skade/format/table_metadata.h"
#include "server/table_updates.h"
#include "skade/common/nesting.h"
#include "skade/lineage/openlineage.h"
#include "skade/table/deletion_vector.h"

#include <zlib.h>

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
    if (file.error().kind != ErrorKind::kCorrupt) {
      Fail("non-kCorrupt error", file.error().ToString());
    }
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

namespace skade::fuzz {

int FuzzExpressionParser(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto parsed = expr::Parse(text);
  if (!parsed) {
    if (parsed.error().kind != ErrorKind::kInvalidArgument)
      Fail("Parse: non-kInvalidArgument error", parsed.error().ToString());
    return 0;
  }
  const std::string printed = expr::ToString(**parsed);
  auto reparsed = expr::Parse(printed);
  if (!reparsed) Fail("printed filter does not parse", printed + " : " + reparsed.error().message);
  if (expr::ToString(**reparsed) != printed) Fail("ToString is not stable", printed);

  static const Schema schema = *ParseSchemaSpec(
      "a:int, b:long, c:string, d:date, ts:timestamp, tz:timestamptz, x:double, f:float, "
      "p:decimal(9,2), u:uuid, bin:binary, fx:fixed(4), t:time, flag:boolean, "
      "s:struct<n:int,m:string>, l:list<int>");
  auto bound = expr::Bind(*parsed, schema);
  if (!bound) {
    if (bound.error().kind != ErrorKind::kInvalidArgument)
      Fail("Bind: non-kInvalidArgument error", bound.error().ToString());
    return 0;
  }
  // A bound filter prints as text that binds to the same filter.
  const std::string bound_text = expr::ToString(**bound);
  auto rebound_parsed = expr::Parse(bound_text);
  if (!rebound_parsed) Fail("printed bound filter does not parse", bound_text);
  auto rebound = expr::Bind(*rebound_parsed, schema);
  if (!rebound) Fail("printed bound filter does not bind", bound_text + " : " + rebound.error().message);
  if (expr::ToString(**rebound) != bound_text) Fail("bound ToString is not stable", bound_text);

  // Binding folds constants away, so unknown statistics prune only a filter that is
  // false outright.
  expr::ColumnStats unknown;
  if (!expr::MightMatch(**bound, unknown) && (*bound)->op != expr::Op::kFalse)
    Fail("unknown stats pruned a filter", bound_text);
  static const PartitionSpec spec = *ParsePartitionSpec(
      "a, bucket(4, b), truncate(2, c), day(ts), hour(tz), month(d), truncate(100, p), "
      "bucket(3, u), truncate(2, bin), s.n",
      schema);
  auto projected = expr::ProjectToPartition(**bound, spec, schema);
  if (!projected) Fail("ProjectToPartition failed", projected.error().ToString());
  std::vector<Value> nulls(spec.fields().size());
  (void)expr::EvaluatePartition(**projected, spec, nulls);
  auto ptype = spec.PartitionType(schema);
  if (!ptype) Fail("PartitionType failed", ptype.error().ToString());
  std::vector<TypePtr> types;
  for (const auto& f : (*ptype)->fields) types.push_back(f.type);
  std::vector<expr::PartitionFieldSummary> summaries(types.size());
  (void)expr::ManifestMightMatch(**projected, spec, types, summaries);
  return 0;
}

}  // namespace skade::fuzz

namespace skade::fuzz {

int FuzzMetadataJson(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto parsed = ParseTableMetadata(text);
  if (!parsed) {
    if (parsed.error().kind != ErrorKind::kCorrupt) {
      std::fprintf(stderr, "metadata parse returned %s\n", parsed.error().ToString().c_str());
      std::abort();
    }
    return 0;
  }
  std::string once = TableMetadataToJson(*parsed);
  auto again = ParseTableMetadata(once);
  if (!again || TableMetadataToJson(*again) != once) {
    std::fprintf(stderr, "metadata JSON does not round-trip\n");
    std::abort();
  }
  return 0;
}

}  // namespace skade::fuzz

namespace skade::fuzz {

int FuzzManifestList(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto list = ReadManifestList(bytes);
  if (!list) {
    if (list.error().kind != ErrorKind::kCorrupt) {
      std::fprintf(stderr, "manifest list read returned %s\n", list.error().ToString().c_str());
      std::abort();
    }
    return 0;
  }
  auto written = WriteManifestList(1, std::nullopt, 1, *list);
  if (!written) return 0;  // e.g. values the writer refuses; reading did not crash
  auto again = ReadManifestList(*written);
  if (!again || again->size() != list->size()) {
    std::fprintf(stderr, "manifest list does not round-trip\n");
    std::abort();
  }
  for (size_t i = 0; i < list->size(); ++i)
    if ((*again)[i].manifest_path != (*list)[i].manifest_path ||
        (*again)[i].added_rows_count != (*list)[i].added_rows_count) {
      std::fprintf(stderr, "manifest list entry %zu changed\n", i);
      std::abort();
    }
  return 0;
}

}  // namespace skade::fuzz

namespace skade::fuzz {

namespace {

// A mapping read from either format must write both ways and read back the same.
void CheckBothFormats(const bifrost::MappingSpec& spec) {
  const std::string yaml = spec.ToYaml();
  auto again = bifrost::MappingSpec::Parse(yaml, "again.yaml");
  if (!again) Fail("its own YAML does not parse", again.error().ToString() + "\n" + yaml);
  if (again->ToYaml() != yaml) Fail("YAML not stable", yaml);
  const std::string ron = spec.ToRon();
  auto from_ron = bifrost::MappingSpec::ParseRon(ron, "again.ron");
  if (!from_ron) Fail("its own RON does not parse", from_ron.error().ToString() + "\n" + ron);
  if (from_ron->ToYaml() != yaml) Fail("RON round trip changed the mapping", ron + "\n" + yaml);
}

}  // namespace

int FuzzMappingFile(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  // Every input is tried as RON too: both readers take untrusted files.
  auto ron = bifrost::MappingSpec::ParseRon(text, "fuzz.ron");
  if (!ron && ron.error().kind != ErrorKind::kInvalidArgument) Fail("parse RON", ron.error().ToString());
  if (ron) CheckBothFormats(*ron);
  auto spec = bifrost::MappingSpec::Parse(text, "fuzz.yaml");
  if (!spec) {
    if (spec.error().kind != ErrorKind::kInvalidArgument) Fail("parse", spec.error().ToString());
    return 0;
  }
  CheckBothFormats(*spec);
  static const auto schema = std::make_shared<const Schema>(
      *ParseSchemaSpec("id:long!, name:string, org:string, code:int, boss_id:long, score:double, "
                       "tags:list<string>, meta:struct<a:int>"));
  auto lookup = [](const TableIdent& ident) -> Result<std::shared_ptr<const Schema>> {
    if (ident.ToString() == "db.t") return schema;
    return NotFound("table '" + ident.ToString() + "' not found (tables: db.t)");
  };
  auto compiled = bifrost::CompileMapping(*spec, lookup, bifrost::TransformRegistry());
  if (!compiled && compiled.error().kind != ErrorKind::kInvalidArgument &&
      compiled.error().kind != ErrorKind::kNotFound)
    Fail("compile", compiled.error().ToString());
  return 0;
}

}  // namespace skade::fuzz

namespace skade::fuzz {
namespace {

[[noreturn]] void Broken(const char* what, const Error& e) {
  std::fprintf(stderr, "%s returned %s\n", what, e.ToString().c_str());
  std::abort();
}

void CheckRoundTrip(const TableMetadata& m) {
  std::string once = TableMetadataToJson(m);
  auto again = ParseTableMetadata(once);
  if (!again || TableMetadataToJson(*again) != once) {
    std::fprintf(stderr, "metadata from a REST commit does not round-trip\n");
    std::abort();
  }
}

}  // namespace

int FuzzRestCommit(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  if (!CheckJsonNesting(text, "body")) return 0;  // the server refuses these before parsing
  auto body = nlohmann::ordered_json::parse(text, nullptr, false);
  if (body.is_discarded() || !body.is_object()) return 0;
  static const TableMetadata base = [] {
    auto m = server::MetadataForCreate(
        nlohmann::ordered_json::parse(R"({"name":"t","schema":{"type":"struct","fields":[
          {"id":1,"name":"id","required":true,"type":"long"},{"id":2,"name":"s","required":false,"type":"string"}]},
          "partition-spec":{"fields":[{"source-id":1,"transform":"bucket[4]","name":"b"}]}})"),
        "/tmp/fuzz-wh/db.db/t");
    if (!m) Broken("the fixed create", m.error());
    return *m;
  }();
  auto allowed = [](const Error& e) {
    return e.kind == ErrorKind::kInvalidArgument || e.kind == ErrorKind::kCommitConflict ||
           e.kind == ErrorKind::kUnsupported;
  };
  const auto& reqs = body.contains("requirements") ? body["requirements"] : nlohmann::ordered_json::array();
  const auto& updates = body.contains("updates") ? body["updates"] : nlohmann::ordered_json::array();
  for (const TableMetadata* b : {&base, static_cast<const TableMetadata*>(nullptr)}) {
    auto next = server::ApplyCommit(b, reqs, updates, "/tmp/fuzz-wh/db.db/new");
    if (!next && !allowed(next.error())) Broken("ApplyCommit", next.error());
    if (next) CheckRoundTrip(*next);
  }
  if (body.contains("schema")) {
    auto created = server::MetadataForCreate(body, "/tmp/fuzz-wh/db.db/c");
    if (!created && !allowed(created.error())) Broken("MetadataForCreate", created.error());
    if (created) CheckRoundTrip(*created);
  }
  return 0;
}

int FuzzOpenLineageEvent(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  lineage::RunEventMapper mapper("/tmp/fuzz-wh", nullptr);
  auto e = mapper.FromRunEvent(text);
  if (!e) {
    if (e.error().kind != ErrorKind::kInvalidArgument) Broken("FromRunEvent", e.error());
    return 0;
  }
  auto again = mapper.FromRunEvent(mapper.ToRunEvent(*e));
  if (!again) Broken("FromRunEvent of ToRunEvent", again.error());
  return 0;
}

int FuzzWasmReply(const uint8_t* data, size_t size) {
  auto table = bifrost::DecodeGuestReply(data, size);
  if (!table) {
    if (table.error().kind != ErrorKind::kInvalidArgument) Broken("DecodeGuestReply", table.error());
    if (table.error().message.find('\n') != std::string::npos) Broken("DecodeGuestReply (two lines)", table.error());
    return 0;
  }
  if (!(*table)->ValidateFull().ok()) Fail("DecodeGuestReply returned an invalid table");
  auto sent = bifrost::EncodeGuestInput(**table);
  if (!sent) return 0;  // a column of a type no guest is given
  auto back = bifrost::DecodeGuestReply((*sent)->data(), static_cast<uint64_t>((*sent)->size()));
  if (!back) Broken("DecodeGuestReply of EncodeGuestInput", back.error());
  // Columns of the five guest types travel unchanged (others are widened).
  if ((*back)->schema()->Equals(*(*table)->schema()) &&
      !(*back)->Equals(**table, arrow::EqualOptions::Defaults().nans_equal(true)))
    Fail("EncodeGuestInput did not read back the same");
  return 0;
}

namespace {

void CheckDecoded(std::string_view blob, int64_t rows) {
  auto positions = DecodeDeletionVector(blob, rows, "fuzz.puffin");
  if (!positions) {
    if (positions.error().kind != ErrorKind::kCorrupt) Fail("non-kCorrupt error", positions.error().ToString());
    return;
  }
  for (size_t i = 0; i < positions->size(); ++i) {
    const int64_t p = (*positions)[i];
    if (p < 0 || p >= rows || (i > 0 && p <= (*positions)[i - 1])) Fail("position out of order or range");
  }
  const PuffinFile file = WriteDeletionVectors({DeletionVector{"f.parquet", *positions}});
  const auto [offset, length] = file.blobs.at(0);
  auto again = DecodeDeletionVector(std::string_view(file.bytes).substr(offset, length), rows, "again");
  if (!again) Fail("written vector does not decode", again.error().ToString());
  if (*again != *positions) Fail("written vector decodes to other positions");
}

}  // namespace

int FuzzDeletionVector(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  // Row counts around the 16- and 32-bit container edges, and one past 2^32.
  constexpr int64_t kRows[] = {1, 100, 65536, 65537, 1 << 20, (int64_t{1} << 32) + 70000};
  CheckDecoded(bytes, kRows[std::size(kRows) - 1]);
  if (size < 2) return 0;
  const int64_t rows = kRows[static_cast<unsigned char>(data[0]) % std::size(kRows)];
  std::string body = "\xD1\xD3\x39\x64";
  body.append(bytes.substr(2));
  std::string blob;
  for (int i = 3; i >= 0; --i) blob += static_cast<char>((body.size() >> (8 * i)) & 0xFF);
  blob += body;
  const uint32_t crc = static_cast<uint32_t>(crc32_z(0, reinterpret_cast<const Bytef*>(body.data()), body.size()));
  for (int i = 3; i >= 0; --i) blob += static_cast<char>((crc >> (8 * i)) & 0xFF);
  CheckDecoded(blob, rows);
  return 0;
}

}  // namespace skade::fuzz
