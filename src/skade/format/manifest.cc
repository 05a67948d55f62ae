// Manifest and manifest-list Avro layouts (spec "Manifests", "Manifest Lists").
// Columns are bound by Iceberg field id, never by name, so files from other
// writers (and older versions) read the same.
#include "skade/format/manifest.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

#include "skade/avro/avro.h"
#include "skade/format/table_metadata.h"

namespace skade {
namespace {

using avro::Node;
using AV = avro::Value;

std::string Field(const std::string& name, const std::string& type, int id, bool optional) {
  std::string t = optional ? "[\"null\"," + type + "]" : type;
  return "{\"name\":\"" + name + "\",\"type\":" + t + (optional ? ",\"default\":null" : "") +
         ",\"field-id\":" + std::to_string(id) + "}";
}

std::string IntMap(int key_id, int value_id, const std::string& value_type) {
  std::string rec = "{\"type\":\"record\",\"name\":\"k" + std::to_string(key_id) + "_v" +
                    std::to_string(value_id) + "\",\"fields\":[" +
                    Field("key", "\"int\"", key_id, false) + "," +
                    Field("value", value_type, value_id, false) + "]}";
  return "{\"type\":\"array\",\"items\":" + rec + ",\"logicalType\":\"map\"}";
}

int DecimalBytes(int precision) {
  int n = 1;
  while (true) {
    // digits representable by a signed n-byte integer: floor(log10(2^(8n-1) - 1))
    long double max = 1;
    for (int i = 0; i < 8 * n - 1; ++i) max *= 2;
    int digits = 0;
    for (long double v = max - 1; v >= 10; v /= 10) ++digits;
    if (digits >= precision) return n;
    ++n;
  }
}

std::string SanitizeAvroName(const std::string& name) {
  std::string out;
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    bool ok = std::isalpha(static_cast<unsigned char>(c)) || c == '_' ||
              (i > 0 && std::isdigit(static_cast<unsigned char>(c)));
    if (ok) {
      out += c;
    } else if (i == 0 && std::isdigit(static_cast<unsigned char>(c))) {
      out += "_";
      out += c;
    } else {
      char buf[8];
      snprintf(buf, sizeof buf, "_x%02X", static_cast<unsigned char>(c));
      out += buf;
    }
  }
  return out.empty() ? "_" : out;
}

std::string ManifestEntrySchema(const std::vector<TypePtr>& ptypes, const PartitionSpec& spec,
                                int format_version) {
  std::string pfields;
  for (size_t i = 0; i < spec.fields().size(); ++i) {
    if (i) pfields += ",";
    pfields += Field(SanitizeAvroName(spec.fields()[i].name), PrimitiveAvroSchema(*ptypes[i]),
                     spec.fields()[i].field_id, true);
  }
  std::string data_file =
      "{\"type\":\"record\",\"name\":\"r2\",\"fields\":[" + Field("content", "\"int\"", 134, false) +
      "," + Field("file_path", "\"string\"", 100, false) + "," +
      Field("file_format", "\"string\"", 101, false) + "," +
      Field("partition", "{\"type\":\"record\",\"name\":\"r102\",\"fields\":[" + pfields + "]}", 102,
            false) +
      "," + Field("record_count", "\"long\"", 103, false) + "," +
      Field("file_size_in_bytes", "\"long\"", 104, false) + "," +
      Field("column_sizes", IntMap(117, 118, "\"long\""), 108, true) + "," +
      Field("value_counts", IntMap(119, 120, "\"long\""), 109, true) + "," +
      Field("null_value_counts", IntMap(121, 122, "\"long\""), 110, true) + "," +
      Field("nan_value_counts", IntMap(138, 139, "\"long\""), 137, true) + "," +
      Field("lower_bounds", IntMap(126, 127, "\"bytes\""), 125, true) + "," +
      Field("upper_bounds", IntMap(129, 130, "\"bytes\""), 128, true) + "," +
      Field("key_metadata", "\"bytes\"", 131, true) + "," +
      Field("split_offsets", "{\"type\":\"array\",\"items\":\"long\",\"element-id\":133}", 132, true) +
      "," + Field("equality_ids", "{\"type\":\"array\",\"items\":\"int\",\"element-id\":136}", 135, true) +
      "," + Field("sort_order_id", "\"int\"", 140, true) +
      (format_version >= 3 ? "," + Field("first_row_id", "\"long\"", 142, true) + "," +
                                 Field("referenced_data_file", "\"string\"", 143, true) + "," +
                                 Field("content_offset", "\"long\"", 144, true) + "," +
                                 Field("content_size_in_bytes", "\"long\"", 145, true)
                           : "") +
      "]}";
  return "{\"type\":\"record\",\"name\":\"manifest_entry\",\"fields\":[" +
         Field("status", "\"int\"", 0, false) + "," + Field("snapshot_id", "\"long\"", 1, true) + "," +
         Field("sequence_number", "\"long\"", 3, true) + "," +
         Field("file_sequence_number", "\"long\"", 4, true) + "," +
         Field("data_file", data_file, 2, false) + "]}";
}

// The manifest list's Avro schema: v3 adds each manifest's first_row_id.
std::string BuildManifestListSchema(int format_version) {
  return
      "{\"type\":\"record\",\"name\":\"manifest_file\",\"fields\":[" +
      Field("manifest_path", "\"string\"", 500, false) + "," +
      Field("manifest_length", "\"long\"", 501, false) + "," +
      Field("partition_spec_id", "\"int\"", 502, false) + "," + Field("content", "\"int\"", 517, false) +
      "," + Field("sequence_number", "\"long\"", 515, false) + "," +
      Field("min_sequence_number", "\"long\"", 516, false) + "," +
      Field("added_snapshot_id", "\"long\"", 503, false) + "," +
      Field("added_files_count", "\"int\"", 504, false) + "," +
      Field("existing_files_count", "\"int\"", 505, false) + "," +
      Field("deleted_files_count", "\"int\"", 506, false) + "," +
      Field("added_rows_count", "\"long\"", 512, false) + "," +
      Field("existing_rows_count", "\"long\"", 513, false) + "," +
      Field("deleted_rows_count", "\"long\"", 514, false) + "," +
      Field("partitions",
            "{\"type\":\"array\",\"items\":{\"type\":\"record\",\"name\":\"r508\",\"fields\":[" +
                Field("contains_null", "\"boolean\"", 509, false) + "," +
                Field("contains_nan", "\"boolean\"", 518, true) + "," +
                Field("lower_bound", "\"bytes\"", 510, true) + "," +
                Field("upper_bound", "\"bytes\"", 511, true) + "]},\"element-id\":508}",
            507, true) +
      "," + Field("key_metadata", "\"bytes\"", 519, true) +
      (format_version >= 3 ? "," + Field("first_row_id", "\"long\"", 520, true) : "") + "]}";
}

const std::string& ManifestListSchema(int format_version) {
  static const std::string v2 = BuildManifestListSchema(2), v3 = BuildManifestListSchema(3);
  return format_version >= 3 ? v3 : v2;
}

// --- encoding helpers -------------------------------------------------------

AV Opt(AV v) { return AV::Union(1, std::move(v)); }
AV None() { return AV::Union(0, AV::Null()); }

AV IntLongMap(const std::map<int, int64_t>& m) {
  if (m.empty()) return None();
  AV::List items;
  items.reserve(m.size());
  for (const auto& [k, v] : m) items.push_back(AV::Record({AV::Int(k), AV::Long(v)}));
  return Opt(AV::Array(std::move(items)));
}

AV IntBytesMap(const std::map<int, std::string>& m) {
  if (m.empty()) return None();
  AV::List items;
  for (const auto& [k, v] : m) items.push_back(AV::Record({AV::Int(k), AV::Bytes(v)}));
  return Opt(AV::Array(std::move(items)));
}

// Decimal partition values travel as Avro fixed of the precision's byte width.
std::string SignExtend(const std::string& minimal, int width) {
  if (static_cast<int>(minimal.size()) >= width) return minimal.substr(minimal.size() - width);
  char fill = (!minimal.empty() && (static_cast<unsigned char>(minimal[0]) & 0x80)) ? '\xff' : '\0';
  return std::string(width - minimal.size(), fill) + minimal;
}

Result<AV> PartitionValueToAvro(const Type& type, const Value& v) {
  if (IsNull(v)) return None();
  switch (type.id) {
    case TypeId::kBoolean: return Opt(AV::Bool(std::get<bool>(v)));
    case TypeId::kInt:
    case TypeId::kDate: return Opt(AV::Int(std::get<int32_t>(v)));
    case TypeId::kLong:
    case TypeId::kTime:
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz:
    case TypeId::kTimestampNs:
    case TypeId::kTimestampTzNs: return Opt(AV::Long(std::get<int64_t>(v)));
    case TypeId::kFloat: return Opt(AV::Float(std::get<float>(v)));
    case TypeId::kDouble: return Opt(AV::Double(std::get<double>(v)));
    case TypeId::kDecimal: {
      SKADE_ASSIGN_OR_RETURN(std::string b, SerializeValue(type, v));
      return Opt(AV::Bytes(SignExtend(b, DecimalBytes(type.precision))));
    }
    default:
      return Opt(AV::Bytes(std::get<std::string>(v)));
  }
}

// --- decoding helpers -------------------------------------------------------

const AV* Unwrap(const AV* v) {
  while (v && v->branch >= 0) v = v->list().empty() ? nullptr : &v->list()[0];
  if (v && v->is_null()) return nullptr;
  return v;
}

// Record field by Iceberg field id; nullptr when the writer did not write it or it is null.
const AV* ById(const Node& rec, const AV& v, int id) {
  int idx = rec.FieldIndexById(id);
  if (idx < 0 || !std::holds_alternative<AV::List>(v.data)) return nullptr;
  const auto& l = v.list();
  if (idx >= static_cast<int>(l.size())) return nullptr;
  return Unwrap(&l[idx]);
}

const Node* FieldType(const Node& rec, int id) {
  int idx = rec.FieldIndexById(id);
  if (idx < 0) return nullptr;
  const Node* t = rec.fields[idx].type.get();
  if (t->kind == avro::NodeKind::kUnion)
    for (const auto& b : t->branches)
      if (b->kind != avro::NodeKind::kNull) return b.get();
  return t;
}

Result<int64_t> AsLong(const AV* v, const char* what) {
  if (!v) return Corrupt(std::string("missing required field ") + what);
  if (auto* i = std::get_if<int64_t>(&v->data)) return *i;
  if (auto* i = std::get_if<int32_t>(&v->data)) return *i;
  return Corrupt(std::string("field ") + what + " is not an integer");
}

Result<std::string> AsBytes(const AV* v, const char* what) {
  if (!v) return Corrupt(std::string("missing required field ") + what);
  if (auto* s = std::get_if<std::string>(&v->data)) return *s;
  return Corrupt(std::string("field ") + what + " is not a string");
}

template <typename V, typename F>
Status ReadIntMap(const AV* v, std::map<int, V>* out, F convert) {
  if (!v) return {};
  if (auto* arr = std::get_if<AV::List>(&v->data)) {
    for (const auto& kv : *arr) {
      if (!std::holds_alternative<AV::List>(kv.data) || kv.list().size() < 2)
        return Corrupt("metrics map entry is not a key/value record");
      SKADE_ASSIGN_OR_RETURN(int64_t k, AsLong(Unwrap(&kv.list()[0]), "map key"));
      SKADE_ASSIGN_OR_RETURN(V val, convert(Unwrap(&kv.list()[1])));
      (*out)[static_cast<int>(k)] = std::move(val);
    }
  } else if (auto* m = std::get_if<AV::MapEntries>(&v->data)) {
    for (const auto& [k, val] : *m) {
      SKADE_ASSIGN_OR_RETURN(V conv, convert(Unwrap(&val)));
      (*out)[std::atoi(k.c_str())] = std::move(conv);
    }
  }
  return {};
}

Result<Value> PartitionValueFromAvro(const Type& type, const AV* v) {
  if (!v) return Value{};
  switch (type.id) {
    case TypeId::kBoolean:
      if (auto* b = std::get_if<bool>(&v->data)) return Value{*b};
      break;
    case TypeId::kInt:
    case TypeId::kDate: {
      SKADE_ASSIGN_OR_RETURN(int64_t x, AsLong(v, "partition value"));
      return Value{static_cast<int32_t>(x)};
    }
    case TypeId::kLong:
    case TypeId::kTime:
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz:
    case TypeId::kTimestampNs:
    case TypeId::kTimestampTzNs: {
      SKADE_ASSIGN_OR_RETURN(int64_t x, AsLong(v, "partition value"));
      return Value{x};
    }
    case TypeId::kFloat:
      if (auto* f = std::get_if<float>(&v->data)) return Value{*f};
      break;
    case TypeId::kDouble:
      if (auto* d = std::get_if<double>(&v->data)) return Value{*d};
      break;
    case TypeId::kUuid: {
      SKADE_ASSIGN_OR_RETURN(std::string b, AsBytes(v, "partition value"));
      if (b.size() == 36) return ParseValue(type, b);  // some writers use the string form
      return DeserializeValue(type, b);
    }
    default: {
      SKADE_ASSIGN_OR_RETURN(std::string b, AsBytes(v, "partition value"));
      return DeserializeValue(type, b);
    }
  }
  return Corrupt("partition value does not match type " + type.ToString());
}

}  // namespace

std::string PrimitiveAvroSchema(const Type& type) {
  switch (type.id) {
    case TypeId::kBoolean: return "\"boolean\"";
    case TypeId::kInt: return "\"int\"";
    case TypeId::kLong: return "\"long\"";
    case TypeId::kFloat: return "\"float\"";
    case TypeId::kDouble: return "\"double\"";
    case TypeId::kDate: return R"({"type":"int","logicalType":"date"})";
    case TypeId::kTime: return R"({"type":"long","logicalType":"time-micros"})";
    case TypeId::kTimestamp:
      return R"({"type":"long","logicalType":"timestamp-micros","adjust-to-utc":false})";
    case TypeId::kTimestampTz:
      return R"({"type":"long","logicalType":"timestamp-micros","adjust-to-utc":true})";
    case TypeId::kTimestampNs:
      return R"({"type":"long","logicalType":"timestamp-nanos","adjust-to-utc":false})";
    case TypeId::kTimestampTzNs:
      return R"({"type":"long","logicalType":"timestamp-nanos","adjust-to-utc":true})";
    case TypeId::kString: return "\"string\"";
    case TypeId::kUuid: return R"({"type":"fixed","name":"uuid_fixed","size":16,"logicalType":"uuid"})";
    case TypeId::kBinary: return "\"bytes\"";
    case TypeId::kFixed:
      return "{\"type\":\"fixed\",\"name\":\"fixed_" + std::to_string(type.length) +
             "\",\"size\":" + std::to_string(type.length) + "}";
    case TypeId::kDecimal:
      return "{\"type\":\"fixed\",\"name\":\"decimal_" + std::to_string(type.precision) + "_" +
             std::to_string(type.scale) + "\",\"size\":" + std::to_string(DecimalBytes(type.precision)) +
             ",\"logicalType\":\"decimal\",\"precision\":" + std::to_string(type.precision) +
             ",\"scale\":" + std::to_string(type.scale) + "}";
    default: return "\"null\"";
  }
}

Result<std::string> WriteManifest(const ManifestWriteContext& ctx,
                                  const std::vector<ManifestEntry>& entries) {
  SKADE_ASSIGN_OR_RETURN(TypePtr ptype, ctx.spec->PartitionType(*ctx.schema));
  std::vector<TypePtr> ptypes;
  for (const auto& f : ptype->fields) ptypes.push_back(f.type);
  if (ctx.format_version < 2 || ctx.format_version > 3)
    return InvalidArgument("manifests are written as format version 2 or 3, not " + std::to_string(ctx.format_version));
  const bool v3 = ctx.format_version >= 3;
  SKADE_ASSIGN_OR_RETURN(avro::NodePtr schema,
                         avro::ParseSchema(ManifestEntrySchema(ptypes, *ctx.spec, ctx.format_version)));
  std::vector<AV> records;
  records.reserve(entries.size());
  for (const auto& e : entries) {
    const DataFile& f = e.data_file;
    if (f.partition.size() != ptypes.size())
      return InvalidArgument("data file " + f.file_path + " has " +
                             std::to_string(f.partition.size()) + " partition values, spec has " +
                             std::to_string(ptypes.size()));
    AV::List part;
    for (size_t i = 0; i < ptypes.size(); ++i) {
      SKADE_ASSIGN_OR_RETURN(AV pv, PartitionValueToAvro(*ptypes[i], f.partition[i]));
      part.push_back(std::move(pv));
    }
    AV::List offsets;
    for (int64_t o : f.split_offsets) offsets.push_back(AV::Long(o));
    AV::List eq;
    for (int id : f.equality_ids) eq.push_back(AV::Int(id));
    AV df = AV::Record({
        AV::Int(static_cast<int>(f.content)), AV::Bytes(f.file_path), AV::Bytes(f.file_format),
        AV::Record(std::move(part)), AV::Long(f.record_count), AV::Long(f.file_size_in_bytes),
        IntLongMap(f.column_sizes), IntLongMap(f.stats.value_counts),
        IntLongMap(f.stats.null_value_counts), IntLongMap(f.stats.nan_value_counts),
        IntBytesMap(f.stats.lower_bounds), IntBytesMap(f.stats.upper_bounds), None(),
        offsets.empty() ? None() : Opt(AV::Array(std::move(offsets))),
        eq.empty() ? None() : Opt(AV::Array(std::move(eq))),
        f.sort_order_id ? Opt(AV::Int(*f.sort_order_id)) : None(),
    });
    auto opt_long = [](const std::optional<int64_t>& v) { return v ? Opt(AV::Long(*v)) : None(); };
    if (v3) {
      auto& fields = df.list();
      fields.push_back(opt_long(f.first_row_id));
      fields.push_back(f.referenced_data_file ? Opt(AV::Bytes(*f.referenced_data_file)) : None());
      fields.push_back(opt_long(f.content_offset));
      fields.push_back(opt_long(f.content_size_in_bytes));
    }
    records.push_back(AV::Record({AV::Int(static_cast<int>(e.status)), opt_long(e.snapshot_id),
                                  opt_long(e.sequence_number), opt_long(e.file_sequence_number),
                                  std::move(df)}));
  }
  std::map<std::string, std::string> meta{
      {"schema", SchemaToJson(*ctx.schema)},
      {"schema-id", std::to_string(ctx.schema->schema_id())},
      {"partition-spec", PartitionFieldsToJson(*ctx.spec)},
      {"partition-spec-id", std::to_string(ctx.spec->spec_id())},
      {"format-version", std::to_string(ctx.format_version)},
      {"content", ctx.content == 0 ? "data" : "deletes"},
  };
  SKADE_ASSIGN_OR_RETURN(avro::Codec codec, avro::ParseCodec(ctx.codec));
  return avro::WriteContainer(*schema, meta, records, codec);
}

Result<std::vector<ManifestEntry>> ReadManifest(std::string_view bytes, const ManifestFile& manifest,
                                                const Schema& schema, const PartitionSpec& spec) {
  SKADE_ASSIGN_OR_RETURN(avro::ContainerFile file, avro::ReadContainer(bytes));
  const Node& root = *file.schema;
  if (root.kind != avro::NodeKind::kRecord) return Corrupt("manifest schema is not a record");
  const Node* df_node = FieldType(root, 2);
  if (!df_node || df_node->kind != avro::NodeKind::kRecord)
    return Corrupt("manifest has no data_file record (field id 2)");
  const Node* part_node = FieldType(*df_node, 102);
  SKADE_ASSIGN_OR_RETURN(TypePtr ptype, spec.PartitionType(schema));

  std::vector<ManifestEntry> out;
  out.reserve(file.records.size());
  // Format v3 row lineage: data files written without a first row id inherit the next one
  // of their manifest's, counted over the files before them that had none.
  const bool inherit_row_ids = manifest.content == 0 && manifest.first_row_id.has_value();
  int64_t next_row_id = manifest.first_row_id.value_or(0);
  for (const AV& rec : file.records) {
    ManifestEntry e;
    SKADE_ASSIGN_OR_RETURN(int64_t status, AsLong(ById(root, rec, 0), "status"));
    if (status < 0 || status > 2) return Corrupt("manifest entry status " + std::to_string(status));
    e.status = static_cast<EntryStatus>(status);
    if (const AV* s = ById(root, rec, 1)) { SKADE_ASSIGN_OR_RETURN(e.snapshot_id, AsLong(s, "snapshot_id")); }
    if (const AV* s = ById(root, rec, 3)) { SKADE_ASSIGN_OR_RETURN(e.sequence_number, AsLong(s, "sequence_number")); }
    if (const AV* s = ById(root, rec, 4)) { SKADE_ASSIGN_OR_RETURN(e.file_sequence_number, AsLong(s, "file_sequence_number")); }
    // Inheritance: null snapshot id / sequence numbers come from the manifest.
    if (!e.snapshot_id) e.snapshot_id = manifest.added_snapshot_id;
    if (!e.sequence_number && e.status == EntryStatus::kAdded) e.sequence_number = manifest.sequence_number;
    if (!e.file_sequence_number && e.status == EntryStatus::kAdded)
      e.file_sequence_number = manifest.sequence_number;
    if (!e.sequence_number) e.sequence_number = 0;  // v1 manifests
    if (!e.file_sequence_number) e.file_sequence_number = 0;

    const AV* dfv = ById(root, rec, 2);
    if (!dfv) return Corrupt("manifest entry without data_file");
    DataFile& f = e.data_file;
    f.spec_id = manifest.partition_spec_id;
    if (const AV* c = ById(*df_node, *dfv, 134)) {
      SKADE_ASSIGN_OR_RETURN(int64_t content, AsLong(c, "content"));
      if (content < 0 || content > 2) return Corrupt("data file content " + std::to_string(content));
      f.content = static_cast<FileContent>(content);
    }
    SKADE_ASSIGN_OR_RETURN(f.file_path, AsBytes(ById(*df_node, *dfv, 100), "file_path"));
    SKADE_ASSIGN_OR_RETURN(f.file_format, AsBytes(ById(*df_node, *dfv, 101), "file_format"));
    SKADE_ASSIGN_OR_RETURN(f.record_count, AsLong(ById(*df_node, *dfv, 103), "record_count"));
    SKADE_ASSIGN_OR_RETURN(f.file_size_in_bytes, AsLong(ById(*df_node, *dfv, 104), "file_size_in_bytes"));
    const AV* pv = ById(*df_node, *dfv, 102);
    for (const auto& pf : ptype->fields) {
      const AV* v = (pv && part_node) ? ById(*part_node, *pv, pf.id) : nullptr;
      SKADE_ASSIGN_OR_RETURN(Value val, PartitionValueFromAvro(*pf.type, v));
      f.partition.push_back(std::move(val));
    }
    auto as_long = [](const AV* v) { return AsLong(v, "metric"); };
    auto as_bytes = [](const AV* v) { return AsBytes(v, "bound"); };
    SKADE_RETURN_IF_ERROR(ReadIntMap(ById(*df_node, *dfv, 108), &f.column_sizes, as_long));
    SKADE_RETURN_IF_ERROR(ReadIntMap(ById(*df_node, *dfv, 109), &f.stats.value_counts, as_long));
    SKADE_RETURN_IF_ERROR(ReadIntMap(ById(*df_node, *dfv, 110), &f.stats.null_value_counts, as_long));
    SKADE_RETURN_IF_ERROR(ReadIntMap(ById(*df_node, *dfv, 137), &f.stats.nan_value_counts, as_long));
    SKADE_RETURN_IF_ERROR(ReadIntMap(ById(*df_node, *dfv, 125), &f.stats.lower_bounds, as_bytes));
    SKADE_RETURN_IF_ERROR(ReadIntMap(ById(*df_node, *dfv, 128), &f.stats.upper_bounds, as_bytes));
    f.stats.record_count = f.record_count;
    if (const AV* so = ById(*df_node, *dfv, 132); so && std::holds_alternative<AV::List>(so->data))
      for (const auto& o : so->list()) {
        SKADE_ASSIGN_OR_RETURN(int64_t x, AsLong(Unwrap(&o), "split offset"));
        f.split_offsets.push_back(x);
      }
    if (const AV* eq = ById(*df_node, *dfv, 135); eq && std::holds_alternative<AV::List>(eq->data))
      for (const auto& o : eq->list()) {
        SKADE_ASSIGN_OR_RETURN(int64_t x, AsLong(Unwrap(&o), "equality id"));
        f.equality_ids.push_back(static_cast<int>(x));
      }
    if (const AV* so = ById(*df_node, *dfv, 140)) {
      SKADE_ASSIGN_OR_RETURN(int64_t x, AsLong(so, "sort_order_id"));
      f.sort_order_id = static_cast<int>(x);
    }
    if (ById(*df_node, *dfv, 131))
      return Corrupt(f.file_path + " is encrypted (key_metadata): skade does not read encrypted files");
    if (const AV* v = ById(*df_node, *dfv, 142)) { SKADE_ASSIGN_OR_RETURN(f.first_row_id, AsLong(v, "first_row_id")); }
    if (const AV* v = ById(*df_node, *dfv, 143)) {
      SKADE_ASSIGN_OR_RETURN(f.referenced_data_file, AsBytes(v, "referenced_data_file"));
    }
    if (const AV* v = ById(*df_node, *dfv, 144)) { SKADE_ASSIGN_OR_RETURN(f.content_offset, AsLong(v, "content_offset")); }
    if (const AV* v = ById(*df_node, *dfv, 145)) {
      SKADE_ASSIGN_OR_RETURN(f.content_size_in_bytes, AsLong(v, "content_size_in_bytes"));
    }
    if (f.content_offset && (f.content != FileContent::kPositionDeletes || !f.referenced_data_file ||
                             !f.content_size_in_bytes || *f.content_offset < 0 || *f.content_size_in_bytes < 0))
      return Corrupt(f.file_path + ": a deletion vector needs position-delete content, referenced_data_file and a "
                     "non-negative content_offset and content_size_in_bytes");
    if (inherit_row_ids && !f.first_row_id) {
      f.first_row_id = next_row_id;
      next_row_id += f.record_count;
    }
    out.push_back(std::move(e));
  }
  return out;
}

Result<std::string> WriteManifestList(int64_t snapshot_id, std::optional<int64_t> parent_id,
                                      int64_t sequence_number,
                                      const std::vector<ManifestFile>& manifests,
                                      const std::string& codec_name, int format_version,
                                      std::optional<int64_t> first_row_id) {
  const bool v3 = format_version >= 3;
  SKADE_ASSIGN_OR_RETURN(avro::NodePtr schema, avro::ParseSchema(ManifestListSchema(format_version)));
  std::vector<AV> records;
  for (const auto& m : manifests) {
    AV parts = None();
    if (m.partitions) {
      AV::List items;
      for (const auto& s : *m.partitions)
        items.push_back(AV::Record({AV::Bool(s.contains_null),
                                    s.contains_nan ? Opt(AV::Bool(*s.contains_nan)) : None(),
                                    s.lower_bound ? Opt(AV::Bytes(*s.lower_bound)) : None(),
                                    s.upper_bound ? Opt(AV::Bytes(*s.upper_bound)) : None()}));
      parts = Opt(AV::Array(std::move(items)));
    }
    records.push_back(AV::Record({
        AV::Bytes(m.manifest_path), AV::Long(m.manifest_length), AV::Int(m.partition_spec_id),
        AV::Int(m.content), AV::Long(m.sequence_number), AV::Long(m.min_sequence_number),
        AV::Long(m.added_snapshot_id), AV::Int(m.added_files_count), AV::Int(m.existing_files_count),
        AV::Int(m.deleted_files_count), AV::Long(m.added_rows_count), AV::Long(m.existing_rows_count),
        AV::Long(m.deleted_rows_count), std::move(parts), None(),
    }));
    if (v3) records.back().list().push_back(m.first_row_id ? Opt(AV::Long(*m.first_row_id)) : None());
  }
  std::map<std::string, std::string> meta{
      {"snapshot-id", std::to_string(snapshot_id)},
      {"parent-snapshot-id", parent_id ? std::to_string(*parent_id) : "null"},
      {"sequence-number", std::to_string(sequence_number)},
      {"format-version", std::to_string(format_version)},
  };
  if (v3 && first_row_id) meta["first-row-id"] = std::to_string(*first_row_id);
  SKADE_ASSIGN_OR_RETURN(avro::Codec codec, avro::ParseCodec(codec_name));
  return avro::WriteContainer(*schema, meta, records, codec);
}

Result<std::vector<ManifestFile>> ReadManifestList(std::string_view bytes) {
  SKADE_ASSIGN_OR_RETURN(avro::ContainerFile file, avro::ReadContainer(bytes));
  const Node& root = *file.schema;
  if (root.kind != avro::NodeKind::kRecord) return Corrupt("manifest list schema is not a record");
  const Node* summary_node = nullptr;
  if (const Node* parts = FieldType(root, 507); parts && parts->items) summary_node = parts->items.get();
  std::vector<ManifestFile> out;
  for (const AV& rec : file.records) {
    ManifestFile m;
    SKADE_ASSIGN_OR_RETURN(m.manifest_path, AsBytes(ById(root, rec, 500), "manifest_path"));
    SKADE_ASSIGN_OR_RETURN(m.manifest_length, AsLong(ById(root, rec, 501), "manifest_length"));
    SKADE_ASSIGN_OR_RETURN(int64_t spec_id, AsLong(ById(root, rec, 502), "partition_spec_id"));
    m.partition_spec_id = static_cast<int>(spec_id);
    auto opt = [&](int id, int64_t fallback) -> Result<int64_t> {
      const AV* v = ById(root, rec, id);
      return v ? AsLong(v, "manifest list field") : Result<int64_t>(fallback);
    };
    SKADE_ASSIGN_OR_RETURN(int64_t content, opt(517, 0));
    m.content = static_cast<int>(content);
    SKADE_ASSIGN_OR_RETURN(m.sequence_number, opt(515, 0));
    SKADE_ASSIGN_OR_RETURN(m.min_sequence_number, opt(516, 0));
    SKADE_ASSIGN_OR_RETURN(m.added_snapshot_id, AsLong(ById(root, rec, 503), "added_snapshot_id"));
    SKADE_ASSIGN_OR_RETURN(int64_t a, opt(504, 0));
    SKADE_ASSIGN_OR_RETURN(int64_t ex, opt(505, 0));
    SKADE_ASSIGN_OR_RETURN(int64_t d, opt(506, 0));
    m.added_files_count = static_cast<int>(a);
    m.existing_files_count = static_cast<int>(ex);
    m.deleted_files_count = static_cast<int>(d);
    SKADE_ASSIGN_OR_RETURN(m.added_rows_count, opt(512, 0));
    SKADE_ASSIGN_OR_RETURN(m.existing_rows_count, opt(513, 0));
    SKADE_ASSIGN_OR_RETURN(m.deleted_rows_count, opt(514, 0));
    if (const AV* parts = ById(root, rec, 507); parts && summary_node &&
                                                std::holds_alternative<AV::List>(parts->data)) {
      std::vector<expr::PartitionFieldSummary> sums;
      for (const auto& p : parts->list()) {
        const AV* pv = Unwrap(&p);
        if (!pv) continue;
        expr::PartitionFieldSummary s;
        if (const AV* cn = ById(*summary_node, *pv, 509))
          if (auto* b = std::get_if<bool>(&cn->data)) s.contains_null = *b;
        if (const AV* cn = ById(*summary_node, *pv, 518))
          if (auto* b = std::get_if<bool>(&cn->data)) s.contains_nan = *b;
        if (const AV* lb = ById(*summary_node, *pv, 510)) { SKADE_ASSIGN_OR_RETURN(s.lower_bound, AsBytes(lb, "lower_bound")); }
        if (const AV* ub = ById(*summary_node, *pv, 511)) { SKADE_ASSIGN_OR_RETURN(s.upper_bound, AsBytes(ub, "upper_bound")); }
        sums.push_back(std::move(s));
      }
      m.partitions = std::move(sums);
    }
    if (const AV* v = ById(root, rec, 520)) { SKADE_ASSIGN_OR_RETURN(m.first_row_id, AsLong(v, "first_row_id")); }
    out.push_back(std::move(m));
  }
  return out;
}

std::vector<expr::PartitionFieldSummary> SummarizePartitions(
    const std::vector<TypePtr>& partition_types, const std::vector<ManifestEntry>& entries) {
  std::vector<expr::PartitionFieldSummary> out(partition_types.size());
  std::vector<std::optional<Value>> lo(partition_types.size()), hi(partition_types.size());
  for (auto& s : out) s.contains_null = false;
  for (const auto& e : entries) {
    for (size_t i = 0; i < partition_types.size() && i < e.data_file.partition.size(); ++i) {
      const Value& v = e.data_file.partition[i];
      if (IsNull(v)) {
        out[i].contains_null = true;
        continue;
      }
      bool nan = (std::holds_alternative<double>(v) && std::isnan(std::get<double>(v))) ||
                 (std::holds_alternative<float>(v) && std::isnan(std::get<float>(v)));
      if (nan) {
        out[i].contains_nan = true;
        continue;
      }
      if (!lo[i] || CompareValues(v, *lo[i]) < 0) lo[i] = v;
      if (!hi[i] || CompareValues(v, *hi[i]) > 0) hi[i] = v;
    }
  }
  for (size_t i = 0; i < out.size(); ++i) {
    const Type& t = *partition_types[i];
    if (t.id == TypeId::kFloat || t.id == TypeId::kDouble)
      if (!out[i].contains_nan) out[i].contains_nan = false;
    if (lo[i])
      if (auto b = SerializeValue(t, *lo[i])) out[i].lower_bound = *b;
    if (hi[i])
      if (auto b = SerializeValue(t, *hi[i])) out[i].upper_bound = *b;
  }
  return out;
}

}  // namespace skade
