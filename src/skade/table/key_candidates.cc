#include "skade/table/key_candidates.h"

#include <arrow/api.h>
#include <arrow/compute/api.h>

#include <algorithm>

#include "skade/table/arrow_internal.h"
#include "skade/table/arrow_values.h"
#include "skade/table/delete_index.h"

namespace skade {
namespace {

// More distinct keys than this are validated by their range instead of one by one
// (bounds checks against a long in-list are skipped by the metrics evaluator anyway).
constexpr size_t kInListKeys = 200;

// The distinct non-null values of `column`, ascending: the values of the runs of the
// sorted column (Arrow's Unique would build a hash table of 200 bytes a key).
Result<std::shared_ptr<arrow::Array>> SortedDistinct(const std::shared_ptr<arrow::Array>& column) {
  InitArrowCompute();
  SKADE_ARROW_ASSIGN(auto order, arrow::compute::SortIndices(*column), "keys");  // nulls last
  SKADE_ARROW_ASSIGN(auto sorted, arrow::compute::Take(*column, *order), "keys");
  order.reset();
  SKADE_ARROW_ASSIGN(auto runs, arrow::compute::RunEndEncode(sorted), "keys");
  auto values = static_cast<const arrow::RunEndEncodedArray&>(*runs.make_array()).values();
  return values->Slice(0, values->length() - values->null_count());
}

}  // namespace

Result<KeyCandidates> KeyCandidates::Make(const arrow::RecordBatch& key_rows, const Schema& schema,
                                          const std::vector<const NestedField*>& ids,
                                          const TableMetadata& metadata) {
  KeyCandidates out;
  out.empty_ = key_rows.num_rows() == 0;
  out.filter_ = nullptr;
  for (const auto* f : ids) {
    auto col = ColumnForFieldId(key_rows, schema, f->id);
    if (!col) return InvalidArgument("keys lack identifier column " + f->name);
    SKADE_ASSIGN_OR_RETURN(auto sorted, SortedDistinct(col));
    Column c{f->id, f->type, sorted};
    const int64_t n = sorted->length();
    if (n > 0) {
      auto value = [&](int64_t i) { return ValueAt(*sorted, i, *f->type); };
      expr::ExprPtr p;
      if (n <= static_cast<int64_t>(kInListKeys)) {
        std::vector<Value> values;
        for (int64_t i = 0; i < n; ++i) {
          SKADE_ASSIGN_OR_RETURN(Value v, value(i));
          values.push_back(std::move(v));
        }
        p = n == 1 ? expr::BoundPredicate(expr::Op::kEq, *f, values) : expr::BoundPredicate(expr::Op::kIn, *f, values);
      } else {
        SKADE_ASSIGN_OR_RETURN(Value lo, value(0));
        SKADE_ASSIGN_OR_RETURN(Value hi, value(n - 1));
        p = expr::And(expr::BoundPredicate(expr::Op::kGtEq, *f, {lo}), expr::BoundPredicate(expr::Op::kLtEq, *f, {hi}));
      }
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
    const int64_t n = c.sorted->length();
    if (n == 0) continue;
    auto lo_it = file.stats.lower_bounds.find(c.field_id);
    auto hi_it = file.stats.upper_bounds.find(c.field_id);
    std::optional<Value> lo, hi;
    if (lo_it != file.stats.lower_bounds.end())
      if (auto v = DeserializeValue(*c.type, lo_it->second)) lo = std::move(*v);
    if (hi_it != file.stats.upper_bounds.end())
      if (auto v = DeserializeValue(*c.type, hi_it->second)) hi = std::move(*v);
    // The first key not below the file's lower bound must not be above its upper bound. A
    // key that cannot be read as a value (none can: Make read them) keeps the file.
    auto compare = [&](int64_t i, const Value& bound) -> std::optional<int> {
      auto v = ValueAt(*c.sorted, i, *c.type);
      if (!v) return std::nullopt;
      return CompareValues(*v, bound);
    };
    int64_t first = 0;
    if (lo) {
      int64_t end = n;
      while (first < end) {
        int64_t mid = first + (end - first) / 2;
        auto cmp = compare(mid, *lo);
        if (!cmp) return true;
        if (*cmp < 0) first = mid + 1;
        else end = mid;
      }
    }
    if (first == n) return false;
    if (hi) {
      auto cmp = compare(first, *hi);
      if (!cmp) return true;
      if (*cmp > 0) return false;
    }
  }
  return true;
}

}  // namespace skade
