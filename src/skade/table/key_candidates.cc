#include "skade/table/key_candidates.h"

#include <arrow/api.h>

#include <algorithm>

#include "skade/table/arrow_values.h"
#include "skade/table/delete_index.h"

namespace skade {
namespace {

// More distinct keys than this are validated by their range instead of one by one
// (bounds checks against a long in-list are skipped by the metrics evaluator anyway).
constexpr size_t kInListKeys = 200;

bool Less(const Value& a, const Value& b) { return CompareValues(a, b) < 0; }

}  // namespace

Result<KeyCandidates> KeyCandidates::Make(const arrow::RecordBatch& key_rows, const Schema& schema,
                                          const std::vector<const NestedField*>& ids,
                                          const TableMetadata& metadata) {
  KeyCandidates out;
  out.empty_ = key_rows.num_rows() == 0;
  out.filter_ = nullptr;
  for (const auto* f : ids) {
    Column c{f->id, f->type, {}};
    auto col = ColumnForFieldId(key_rows, schema, f->id);
    if (!col) return InvalidArgument("keys lack identifier column " + f->name);
    c.sorted.reserve(static_cast<size_t>(col->length()));
    for (int64_t r = 0; r < col->length(); ++r) {
      SKADE_ASSIGN_OR_RETURN(Value v, ValueAt(*col, r, *f->type));
      if (!IsNull(v)) c.sorted.push_back(std::move(v));
    }
    std::sort(c.sorted.begin(), c.sorted.end(), Less);
    c.sorted.erase(std::unique(c.sorted.begin(), c.sorted.end(),
                               [](const Value& a, const Value& b) { return CompareValues(a, b) == 0; }),
                   c.sorted.end());
    if (!c.sorted.empty()) {
      expr::ExprPtr p;
      if (c.sorted.size() == 1) p = expr::BoundPredicate(expr::Op::kEq, *f, {c.sorted[0]});
      else if (c.sorted.size() <= kInListKeys) p = expr::BoundPredicate(expr::Op::kIn, *f, c.sorted);
      else
        p = expr::And(expr::BoundPredicate(expr::Op::kGtEq, *f, {c.sorted.front()}),
                      expr::BoundPredicate(expr::Op::kLtEq, *f, {c.sorted.back()}));
      out.filter_ = out.filter_ ? expr::And(out.filter_, p) : p;
    }
    out.columns_.push_back(std::move(c));
  }
  // Partition tuples of the keys, for every spec whose fields all come from key columns.
  for (const PartitionSpec& spec : metadata.specs) {
    if (spec.unpartitioned()) continue;
    bool determined = true;
    for (const auto& pf : spec.fields())
      determined = determined && std::any_of(ids.begin(), ids.end(), [&](const NestedField* f) {
                     return f->id == pf.source_id;
                   });
    if (!determined) continue;
    std::unordered_set<std::string> tuples;
    for (int64_t r = 0; r < key_rows.num_rows(); ++r) {
      std::vector<Value> tuple;
      for (const auto& pf : spec.fields()) {
        const NestedField* src = schema.FindField(pf.source_id);
        auto col = ColumnForFieldId(key_rows, schema, pf.source_id);
        SKADE_ASSIGN_OR_RETURN(Value v, ValueAt(*col, r, *src->type));
        SKADE_ASSIGN_OR_RETURN(Value p, pf.transform.Apply(*src->type, v));
        tuple.push_back(std::move(p));
      }
      tuples.insert(PartitionTupleKey(spec.spec_id(), tuple));
    }
    out.partitions_[spec.spec_id()] = std::move(tuples);
  }
  return out;
}

bool KeyCandidates::MightHold(const DataFile& file) const {
  if (empty_) return false;
  if (auto it = partitions_.find(file.spec_id); it != partitions_.end())
    if (!it->second.contains(PartitionTupleKey(file.spec_id, file.partition))) return false;
  for (const auto& c : columns_) {
    if (c.sorted.empty()) continue;
    auto lo_it = file.stats.lower_bounds.find(c.field_id);
    auto hi_it = file.stats.upper_bounds.find(c.field_id);
    std::optional<Value> lo, hi;
    if (lo_it != file.stats.lower_bounds.end())
      if (auto v = DeserializeValue(*c.type, lo_it->second)) lo = std::move(*v);
    if (hi_it != file.stats.upper_bounds.end())
      if (auto v = DeserializeValue(*c.type, hi_it->second)) hi = std::move(*v);
    // The first key not below the file's lower bound must not be above its upper bound.
    auto first = lo ? std::lower_bound(c.sorted.begin(), c.sorted.end(), *lo, Less) : c.sorted.begin();
    if (first == c.sorted.end()) return false;
    if (hi && CompareValues(*first, *hi) > 0) return false;
  }
  return true;
}

}  // namespace skade
