#include "skade/table/metadata_tables.h"

#include <cmath>
#include <map>
#include <utility>

#include "skade/common/json_text.h"
#include "skade/format/value.h"

namespace skade {
namespace {

// The type of a partition field's source column in the schema the spec binds with.
TypePtr SourceType(const TableMetadata& m, const PartitionSpec& spec, int source_id) {
  const NestedField* f = m.SchemaForSpec(spec, *m.schema()).FindField(source_id);
  return f ? f->type : nullptr;
}

// A value as the primitive type its representation implies, for a source no schema has
// (a decimal shows unscaled: its scale went with the schema).
TypePtr TypeOfValue(const Value& v) {
  static const TypeId kIds[] = {TypeId::kString, TypeId::kBoolean, TypeId::kInt, TypeId::kLong,
                                TypeId::kFloat, TypeId::kDouble, TypeId::kString};
  if (std::holds_alternative<Decimal>(v)) return Type::Decimal(38, 0);
  return Type::Primitive(kIds[v.index()]);
}

// One partition field's value as text, the form of a data file's folder.
std::string FieldText(const PartitionField& field, const TypePtr& source, const Value& v) {
  return field.transform.ValueToPathString(source ? *source : *TypeOfValue(v), v);
}

template <typename Fn>
void ForEachField(const TableMetadata& m, int spec_id, const std::vector<Value>& partition, Fn&& fn) {
  const PartitionSpec* spec = m.SpecById(spec_id);
  if (!spec) return;
  for (size_t i = 0; i < spec->fields().size() && i < partition.size(); ++i) {
    const PartitionField& f = spec->fields()[i];
    fn(f, SourceType(m, *spec, f.source_id), partition[i]);
  }
}

}  // namespace

std::vector<PartitionSummary> PartitionSummaries(const TableMetadata& m, const std::vector<LiveFile>& files) {
  // By spec, then by value field by field, nulls first: the order a person looks for. An
  // int and a long (a promoted source) of one field compare as numbers.
  auto wide = [](const Value& v) -> Value {
    if (const int32_t* i = std::get_if<int32_t>(&v)) return int64_t{*i};
    return v;
  };
  auto less = [&](const std::pair<int, std::vector<Value>>& a, const std::pair<int, std::vector<Value>>& b) {
    if (a.first != b.first) return a.first < b.first;
    for (size_t i = 0; i < a.second.size() && i < b.second.size(); ++i) {
      Value x = wide(a.second[i]), y = wide(b.second[i]);
      if (IsNull(x) || IsNull(y)) {
        if (IsNull(x) != IsNull(y)) return IsNull(x);
        continue;
      }
      if (x.index() != y.index()) return x.index() < y.index();
      if (int c = CompareValues(x, y); c != 0) return c < 0;
    }
    return a.second.size() < b.second.size();
  };
  std::map<std::pair<int, std::vector<Value>>, PartitionSummary, decltype(less)> by_partition(less);
  for (const LiveFile& lf : files) {
    const DataFile& f = lf.file;
    auto [it, fresh] = by_partition.try_emplace({f.spec_id, f.partition});
    PartitionSummary& p = it->second;
    if (fresh) p.spec_id = f.spec_id, p.partition = f.partition;
    if (const Snapshot* s = m.SnapshotById(lf.added_snapshot_id);
        s && (!p.last_updated_ms || *p.last_updated_ms < s->timestamp_ms)) {
      p.last_updated_ms = s->timestamp_ms;
      p.last_updated_snapshot_id = s->snapshot_id;
    }
    switch (f.content) {
      case FileContent::kData:
        p.record_count += f.record_count;
        p.file_count += 1;
        p.data_bytes += f.file_size_in_bytes;
        break;
      case FileContent::kPositionDeletes:
        p.position_delete_records += f.record_count;
        p.position_delete_files += 1;
        break;
      case FileContent::kEqualityDeletes:
        p.equality_delete_records += f.record_count;
        p.equality_delete_files += 1;
        break;
    }
  }
  std::vector<PartitionSummary> out;
  out.reserve(by_partition.size());
  for (auto& [key, summary] : by_partition) out.push_back(std::move(summary));
  return out;
}

std::string PartitionText(const TableMetadata& m, int spec_id, const std::vector<Value>& partition) {
  std::string out;
  ForEachField(m, spec_id, partition, [&](const PartitionField& f, const TypePtr& source, const Value& v) {
    if (!out.empty()) out += '/';
    out += f.name + "=" + FieldText(f, source, v);
  });
  return out;
}

std::string PartitionJson(const TableMetadata& m, int spec_id, const std::vector<Value>& partition) {
  std::string out = "{";
  ForEachField(m, spec_id, partition, [&](const PartitionField& f, const TypePtr& source, const Value& v) {
    if (out.size() > 1) out += ',';
    AppendJsonString(f.name, &out);
    out += ':';
    if (IsNull(v)) {
      out += "null";
      return;
    }
    TypePtr type = source ? f.transform.ResultType(source) : TypeOfValue(v);
    TypeId id = type->id;
    bool finite = !(std::holds_alternative<float>(v) && !std::isfinite(std::get<float>(v))) &&
                  !(std::holds_alternative<double>(v) && !std::isfinite(std::get<double>(v)));
    bool bare = finite && (id == TypeId::kBoolean || id == TypeId::kInt || id == TypeId::kLong ||
                           id == TypeId::kFloat || id == TypeId::kDouble);
    std::string text = FormatValue(*type, v);
    if (bare) out += text;
    else AppendJsonString(text, &out);
  });
  return out + "}";
}

std::string PartitionRangeText(const TableMetadata& m, const ManifestFile& manifest) {
  const PartitionSpec* spec = m.SpecById(manifest.partition_spec_id);
  if (!spec || !manifest.partitions) return "";
  std::string out;
  for (size_t i = 0; i < spec->fields().size() && i < manifest.partitions->size(); ++i) {
    const PartitionField& f = spec->fields()[i];
    const expr::PartitionFieldSummary& s = (*manifest.partitions)[i];
    TypePtr source = SourceType(m, *spec, f.source_id);
    std::string range;
    if (source && s.lower_bound && s.upper_bound) {
      TypePtr type = f.transform.ResultType(source);
      auto lo = DeserializeValue(*type, *s.lower_bound);
      auto hi = DeserializeValue(*type, *s.upper_bound);
      range = lo && hi ? FieldText(f, source, *lo) + ".." + FieldText(f, source, *hi) : "?";
    }
    if (s.contains_null) range += range.empty() ? "null" : "+null";
    if (!out.empty()) out += ", ";
    out += f.name + "=" + (range.empty() ? "?" : range);
  }
  return out;
}

}  // namespace skade
