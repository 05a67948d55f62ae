#include "skade/table/delete_index.h"

#include <arrow/api.h>

#include <algorithm>

#include "skade/io/file_io.h"
#include "skade/table/arrow_internal.h"
#include "skade/table/arrow_schema.h"
#include "skade/table/arrow_values.h"
#include "skade/table/parquet_read.h"

namespace skade {
namespace {

// An int or long key column: its equality keys are also kept as numbers.
bool IsIntegral(const Type& t) { return t.id == TypeId::kInt || t.id == TypeId::kLong; }

}  // namespace

std::string PartitionTupleKey(int spec_id, const std::vector<Value>& tuple) {
  std::string key = std::to_string(spec_id) + "|";
  for (const auto& v : tuple) {
    key += std::visit(
        [](const auto& x) -> std::string {
          using T = std::decay_t<decltype(x)>;
          if constexpr (std::is_same_v<T, std::monostate>) return "N";
          else if constexpr (std::is_same_v<T, std::string>) return "s" + std::to_string(x.size()) + ":" + x;
          else if constexpr (std::is_same_v<T, Decimal>)
            return "d" + std::to_string(static_cast<int64_t>(x.unscaled >> 64)) + ":" +
                   std::to_string(static_cast<uint64_t>(x.unscaled));
          else return "n" + std::to_string(x);
        },
        v);
    key += '\x1f';
  }
  return key;
}

void DeleteIndex::Add(DeleteFileEntry entry) {
  ++count_;
  if (entry.file.partition.empty()) global_.push_back(std::move(entry));
  else by_partition_[PartitionTupleKey(entry.file.spec_id, entry.file.partition)].push_back(std::move(entry));
}

std::vector<DeleteFileEntry> DeleteIndex::For(const DataFile& data_file, int64_t data_seq,
                                              const TableMetadata& metadata) const {
  std::vector<DeleteFileEntry> out;
  auto applies = [&](const DeleteFileEntry& d) {
    if (d.file.content == FileContent::kPositionDeletes) {
      if (d.data_sequence_number < data_seq) return false;
      // The file_path bounds tell which data files a position delete file covers.
      auto lo = d.file.stats.lower_bounds.find(kDeleteFilePathId);
      auto hi = d.file.stats.upper_bounds.find(kDeleteFilePathId);
      if (lo != d.file.stats.lower_bounds.end() && data_file.file_path < lo->second) return false;
      if (hi != d.file.stats.upper_bounds.end() && data_file.file_path > hi->second &&
          hi->second.size() >= data_file.file_path.size())
        return false;
      return true;
    }
    return d.data_sequence_number > data_seq;
  };
  for (const auto& d : global_)
    if (applies(d)) out.push_back(d);
  if (!data_file.partition.empty()) {
    auto it = by_partition_.find(PartitionTupleKey(data_file.spec_id, data_file.partition));
    if (it != by_partition_.end())
      for (const auto& d : it->second)
        if (applies(d)) out.push_back(d);
  }
  (void)metadata;
  return out;
}

void DeletedRows::AddPositions(const std::vector<int64_t>& positions) {
  size_t old = positions_.size();
  positions_.insert(positions_.end(), positions.begin(), positions.end());
  std::sort(positions_.begin() + static_cast<long>(old), positions_.end());
  std::inplace_merge(positions_.begin(), positions_.begin() + static_cast<long>(old), positions_.end());
  positions_.erase(std::unique(positions_.begin(), positions_.end()), positions_.end());
}

void DeletedRows::AddEqualityKeys(const std::vector<int>& field_ids, const EqualityKeySet* keys) {
  for (auto& e : equality_)
    if (e.field_ids == field_ids) {
      e.keys.push_back(keys);
      return;
    }
  equality_.push_back(EqualitySets{field_ids, {keys}});
}

Result<std::string> EqualityKey(const std::vector<std::shared_ptr<arrow::Array>>& columns,
                                const std::vector<TypePtr>& types, int64_t row) {
  std::string key;
  for (size_t c = 0; c < columns.size(); ++c) {
    SKADE_ASSIGN_OR_RETURN(Value v, ValueAt(*columns[c], row, *types[c]));
    if (IsNull(v)) {
      key += '\0';
      continue;
    }
    SKADE_ASSIGN_OR_RETURN(std::string b, SerializeValue(*types[c], v));
    key += '\1';
    key += std::to_string(b.size());
    key += ':';
    key += b;
  }
  return key;
}

Result<std::vector<bool>> DeletedFlags(const DeletedRows& deleted, const arrow::RecordBatch& batch,
                                       const Schema& schema,
                                       const std::function<int64_t(int64_t)>& position_of) {
  std::vector<bool> out(static_cast<size_t>(batch.num_rows()));
  // Rows come in file order: walk the sorted positions alongside (search on a step back).
  const auto& pos = deleted.positions();
  auto at = pos.begin();
  int64_t previous = -1;
  for (int64_t r = 0; r < batch.num_rows() && !pos.empty(); ++r) {
    int64_t p = position_of(r);
    if (p < previous || r == 0) at = std::lower_bound(pos.begin(), pos.end(), p);
    while (at != pos.end() && *at < p) ++at;
    out[static_cast<size_t>(r)] = at != pos.end() && *at == p;
    previous = p;
  }
  for (const auto& sets : deleted.equality()) {
    std::vector<std::shared_ptr<arrow::Array>> cols;
    std::vector<TypePtr> types;
    for (int id : sets.field_ids) {
      auto col = ColumnForFieldId(batch, schema, id);
      const NestedField* f = schema.FindField(id);
      if (!col || !f) return Corrupt("equality delete column " + std::to_string(id) + " not readable");
      cols.push_back(col);
      types.push_back(f->type);
    }
    // One integer key column: compare numbers, no per-row encoding.
    auto numeric_value = [&](int64_t r) -> std::optional<int64_t> {
      const arrow::Array& a = *cols[0];
      if (a.type_id() == arrow::Type::INT64) return static_cast<const arrow::Int64Array&>(a).Value(r);
      if (a.type_id() == arrow::Type::INT32) return static_cast<const arrow::Int32Array&>(a).Value(r);
      return std::nullopt;
    };
    bool numeric = sets.numeric() && IsIntegral(*types[0]) &&
                   (cols[0]->type_id() == arrow::Type::INT64 || cols[0]->type_id() == arrow::Type::INT32);
    for (int64_t r = 0; r < batch.num_rows(); ++r) {
      if (out[static_cast<size_t>(r)]) continue;
      bool gone = false;
      if (numeric) {
        if (cols[0]->IsNull(r)) {
          for (const auto* k : sets.keys) gone = gone || k->has_null;
        } else {
          int64_t v = *numeric_value(r);
          for (const auto* k : sets.keys) gone = gone || k->numbers.contains(v);
        }
      } else {
        SKADE_ASSIGN_OR_RETURN(std::string key, EqualityKey(cols, types, r));
        gone = sets.Contains(key);
      }
      out[static_cast<size_t>(r)] = gone;
    }
  }
  return out;
}

Result<const DeleteLoader::PositionFile*> DeleteLoader::LoadPositions(const DataFile& f) {
  auto it = positions_.find(f.file_path);
  if (it != positions_.end()) return it->second.get();
  SKADE_ASSIGN_OR_RETURN(auto table, ReadWholeParquet(f.file_path, f.record_count));
  auto batch = table->CombineChunksToBatch();
  if (!batch.ok()) return Corrupt(LocalPath(f.file_path) + ": " + batch.status().message());
  std::shared_ptr<arrow::Array> paths, pos;
  for (int c = 0; c < (*batch)->num_columns(); ++c) {
    int id = FieldIdOf(*(*batch)->schema()->field(c));
    const std::string& name = (*batch)->schema()->field(c)->name();
    if (id == kDeleteFilePathId || (id < 0 && name == "file_path")) paths = (*batch)->column(c);
    if (id == kDeletePosId || (id < 0 && name == "pos")) pos = (*batch)->column(c);
  }
  if (!paths || !pos) return Corrupt(LocalPath(f.file_path) + ": position delete file lacks file_path/pos");
  auto pf = std::make_unique<PositionFile>();
  auto string_type = Type::Primitive(TypeId::kString);
  auto long_type = Type::Primitive(TypeId::kLong);
  for (int64_t r = 0; r < paths->length(); ++r) {
    SKADE_ASSIGN_OR_RETURN(Value p, ValueAt(*paths, r, *string_type));
    SKADE_ASSIGN_OR_RETURN(Value n, ValueAt(*pos, r, *long_type));
    if (IsNull(p) || IsNull(n)) return Corrupt(LocalPath(f.file_path) + ": null in a position delete");
    pf->by_path[std::get<std::string>(p)].push_back(std::get<int64_t>(n));
  }
  return positions_.emplace(f.file_path, std::move(pf)).first->second.get();
}

Result<const EqualityKeySet*> DeleteLoader::LoadEquality(const DataFile& f) {
  auto it = equality_.find(f.file_path);
  if (it != equality_.end()) return it->second.get();
  if (f.equality_ids.empty()) return Corrupt(LocalPath(f.file_path) + ": equality delete file without equality ids");
  SKADE_ASSIGN_OR_RETURN(auto table, ReadWholeParquet(f.file_path, f.record_count));
  auto batch = table->CombineChunksToBatch();
  if (!batch.ok()) return Corrupt(LocalPath(f.file_path) + ": " + batch.status().message());
  std::vector<std::shared_ptr<arrow::Array>> cols;
  std::vector<TypePtr> types;
  for (int id : f.equality_ids) {
    const NestedField* field = schema_->FindField(id);
    if (!field) return Corrupt(LocalPath(f.file_path) + ": equality field " + std::to_string(id) + " is not in the schema");
    auto col = ColumnForFieldId(**batch, *schema_, id);
    if (!col) return Corrupt(LocalPath(f.file_path) + ": lacks equality column " + field->name);
    cols.push_back(col);
    types.push_back(field->type);
  }
  auto keys = std::make_unique<EqualityKeySet>();
  keys->numeric = types.size() == 1 && IsIntegral(*types[0]);
  for (int64_t r = 0; r < (*batch)->num_rows(); ++r) {
    SKADE_ASSIGN_OR_RETURN(std::string k, EqualityKey(cols, types, r));
    keys->text.insert(std::move(k));
    if (keys->numeric) {
      SKADE_ASSIGN_OR_RETURN(Value v, ValueAt(*cols[0], r, *types[0]));
      if (IsNull(v))
        keys->has_null = true;
      else
        keys->numbers.insert(std::holds_alternative<int32_t>(v) ? std::get<int32_t>(v) : std::get<int64_t>(v));
    }
  }
  return equality_.emplace(f.file_path, std::move(keys)).first->second.get();
}

Result<DeletedRows> DeleteLoader::Load(const std::string& data_file_path,
                                       const std::vector<DeleteFileEntry>& deletes) {
  DeletedRows rows;
  for (const auto& d : deletes) {
    if (d.file.content == FileContent::kPositionDeletes) {
      SKADE_ASSIGN_OR_RETURN(const PositionFile* pf, LoadPositions(d.file));
      auto it = pf->by_path.find(data_file_path);
      if (it == pf->by_path.end() && data_file_path.starts_with("file://"))
        it = pf->by_path.find(LocalPath(data_file_path));  // writers differ on the scheme
      if (it != pf->by_path.end()) rows.AddPositions(it->second);
    } else {
      SKADE_ASSIGN_OR_RETURN(const auto* keys, LoadEquality(d.file));
      rows.AddEqualityKeys(d.file.equality_ids, keys);  // shared, not copied per data file
    }
  }
  return rows;
}

}  // namespace skade
