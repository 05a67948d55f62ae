// Running a compiled pipeline over fetched rows: collapse changes per key, drop
// null endpoints, and cut the Arrow columns each vertex/edge set needs.
#include <arrow/api.h>
#include <arrow/compute/api.h>


#include "bifrost/transform/transform.h"
#include "skade/common/flat_index.h"
#include "skade/table/arrow_cells.h"
#include "skade/table/arrow_internal.h"

namespace bifrost {
namespace {

enum class Change { kUpsert, kDelete, kBefore };

// Iceberg's spelling and Spark's `update_postimage` spelling both route here.
Result<Change> ParseChange(std::string_view t) {
  std::string s(t);
  for (auto& ch : s) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  if (s == "INSERT" || s == "UPDATE_AFTER" || s == "UPDATE_POSTIMAGE") return Change::kUpsert;
  if (s == "DELETE") return Change::kDelete;
  if (s == "UPDATE_BEFORE" || s == "UPDATE_PREIMAGE") return Change::kBefore;
  return skade::InvalidArgument("unknown _change_type '" + std::string(t) + "'");
}

struct Rows {
  std::shared_ptr<arrow::RecordBatch> batch;
  std::vector<Change> change;  // per row
  std::vector<int64_t> order;  // rows in the order their changes apply

  std::shared_ptr<arrow::Array> Column(const std::string& name) const {
    return batch->GetColumnByName(name);
  }
};

Result<Rows> Prepare(const std::shared_ptr<arrow::Table>& table) {
  skade::InitArrowCompute();
  Rows rows;
  SKADE_ARROW_ASSIGN(rows.batch, table->CombineChunksToBatch(), "combining fetched rows");
  int64_t n = rows.batch->num_rows();
  rows.change.assign(n, Change::kUpsert);
  rows.order.resize(n);
  for (int64_t i = 0; i < n; ++i) rows.order[i] = i;
  auto type_col = rows.batch->GetColumnByName("_change_type");
  if (!type_col) return rows;
  SKADE_ARROW_ASSIGN(auto types, arrow::compute::Cast(type_col, arrow::utf8()), "_change_type");
  const auto& strings = static_cast<const arrow::StringArray&>(*types.make_array());
  for (int64_t i = 0; i < n; ++i) {
    SKADE_ASSIGN_OR_RETURN(rows.change[i], ParseChange(strings.GetView(i)));
  }
  if (auto ord_col = rows.batch->GetColumnByName("_change_ordinal")) {
    SKADE_ARROW_ASSIGN(auto ords, arrow::compute::Cast(ord_col, arrow::int64()), "_change_ordinal");
    auto arr = std::static_pointer_cast<arrow::Int64Array>(ords.make_array());
    // Within one commit an update is a delete then an insert of the same key.
    std::stable_sort(rows.order.begin(), rows.order.end(), [&](int64_t a, int64_t b) {
      if (arr->Value(a) != arr->Value(b)) return arr->Value(a) < arr->Value(b);
      return (rows.change[a] == Change::kUpsert) < (rows.change[b] == Change::kUpsert);
    });
  }
  return rows;
}

// A row's key over some columns, hashed and compared from the Arrow buffers.
struct KeyReader {
  std::vector<skade::CellColumn> cells;

  void Add(const Rows& rows, const std::vector<BoundColumn>& cols) {
    for (const auto& c : cols) cells.emplace_back(rows.Column(c.column));
  }
  bool AnyNull(int64_t i) const {
    for (const auto& c : cells)
      if (c.IsNull(i)) return true;
    return false;
  }
  uint64_t Hash(int64_t i) const {
    uint64_t h = skade::kRowHashSeed;
    for (const auto& c : cells) h = skade::CombineCellHash(h, c.Hash(i));
    return h;
  }
  bool Same(int64_t a, int64_t b) const {
    for (const auto& c : cells)
      if (!c.Equal(a, c, b)) return false;
    return true;
  }
};

// Last change per key wins; returns the surviving rows split by their final change.
struct Survivors {
  std::vector<int64_t> upserts, deletes;
};

template <typename Include>
Survivors Collapse(const Rows& rows, const KeyReader& keys, Include include) {
  skade::FlatIndex index(rows.order.size());
  std::vector<int64_t> first_row;                 // per key, in first-seen order
  std::vector<std::pair<int64_t, Change>> last;  // per key: its last row and change
  for (int64_t i : rows.order) {
    auto change = include(i);
    if (!change) continue;
    auto [k, added] = index.FindOrAdd(keys.Hash(i), last.size(),
                                      [&](uint64_t x) { return keys.Same(first_row[x], i); });
    if (added) {
      first_row.push_back(i);
      last.emplace_back(i, *change);
    } else {
      last[k] = {i, *change};
    }
  }
  Survivors s;
  for (const auto& [row, change] : last)
    (change == Change::kUpsert ? s.upserts : s.deletes).push_back(row);
  return s;
}

Result<std::shared_ptr<arrow::Table>> Take(
    const Rows& rows, const std::vector<const std::vector<BoundColumn>*>& groups,
    const std::vector<int64_t>& indices) {
  arrow::Int64Builder ib;
  SKADE_ARROW_RETURN(ib.AppendValues(indices), "building row selection");
  SKADE_ARROW_ASSIGN(auto idx, ib.Finish(), "building row selection");
  arrow::FieldVector fields;
  arrow::ArrayVector arrays;
  for (const auto* group : groups)
    for (const auto& c : *group) {
      auto col = rows.Column(c.column);
      SKADE_ARROW_ASSIGN(auto taken, arrow::compute::Take(col, idx),
                         "selecting column " + c.column);
      fields.push_back(arrow::field("c" + std::to_string(fields.size()), col->type()));
      arrays.push_back(taken.make_array());
    }
  return arrow::Table::Make(arrow::schema(fields), arrays, static_cast<int64_t>(indices.size()));
}

std::vector<std::string> Props(const std::vector<BoundColumn>& cols) {
  std::vector<std::string> out;
  for (const auto& c : cols) out.push_back(c.property);
  return out;
}

std::vector<skade::TypePtr> Types(std::initializer_list<const std::vector<BoundColumn>*> groups) {
  std::vector<skade::TypePtr> out;
  for (const auto* g : groups)
    for (const auto& c : *g) out.push_back(c.type);
  return out;
}

}  // namespace

Result<GraphMutation> CompiledTable::Apply(const std::shared_ptr<arrow::Table>& input) const {
  GraphMutation m;
  if (input->num_rows() == 0) return m;
  SKADE_ASSIGN_OR_RETURN(Rows rows, Prepare(input));
  const std::string where = "table " + ident.ToString();

  for (const auto& v : vertices) {
    KeyReader keys;
    keys.Add(rows, v.ids);
    for (int64_t i = 0; i < rows.batch->num_rows(); ++i)
      if (rows.change[i] == Change::kUpsert && keys.AnyNull(i))
        return skade::InvalidArgument(where + ": vertex '" + v.label +
                                      "' id column is null in row " + std::to_string(i) +
                                      " (id columns must hold a value)");
    Survivors s = Collapse(rows, keys, [&](int64_t i) -> std::optional<Change> {
      if (rows.change[i] == Change::kBefore || keys.AnyNull(i)) return std::nullopt;
      return rows.change[i];
    });
    if (!s.upserts.empty()) {
      SKADE_ASSIGN_OR_RETURN(auto t, Take(rows, {&v.ids, &v.properties}, s.upserts));
      m.vertices.push_back(
          {v.label, Props(v.ids), Props(v.properties), Types({&v.ids, &v.properties}), t});
    }
    if (!s.deletes.empty()) {
      SKADE_ASSIGN_OR_RETURN(auto t, Take(rows, {&v.ids}, s.deletes));
      m.vertex_deletes.push_back({v.label, Props(v.ids), {}, Types({&v.ids}), t});
    }
  }

  for (const auto& e : edges) {
    KeyReader keys;
    keys.Add(rows, e.src);
    keys.Add(rows, e.dst);
    keys.Add(rows, e.keys);
    // A null foreign key (or edge key) is no edge; a before-image retracts its edge.
    Survivors s = Collapse(rows, keys, [&](int64_t i) -> std::optional<Change> {
      if (keys.AnyNull(i)) return std::nullopt;
      return rows.change[i] == Change::kBefore ? Change::kDelete : rows.change[i];
    });
    auto make = [&](const std::vector<int64_t>& idx, bool with_props) -> Result<EdgeSet> {
      static const std::vector<BoundColumn> kNone;
      const auto& props = with_props ? e.properties : kNone;
      SKADE_ASSIGN_OR_RETURN(auto t, Take(rows, {&e.src, &e.dst, &e.keys, &props}, idx));
      return EdgeSet{e.type,
                     e.src_label,
                     Props(e.src),
                     e.dst_label,
                     Props(e.dst),
                     Props(e.keys),
                     Props(props),
                     Types({&e.src, &e.dst, &e.keys, &props}),
                     t};
    };
    if (!s.upserts.empty()) {
      SKADE_ASSIGN_OR_RETURN(auto set, make(s.upserts, true));
      m.edges.push_back(std::move(set));
    }
    if (!s.deletes.empty()) {
      SKADE_ASSIGN_OR_RETURN(auto set, make(s.deletes, false));
      m.edge_deletes.push_back(std::move(set));
    }
  }

  if (!customs.empty()) {
    TransformContext ctx{ident, schema.get(), spec.mode};
    for (const auto* t : customs) {
      SKADE_ASSIGN_OR_RETURN(auto part, t->Apply(ctx, input));
      m.Merge(std::move(part));
    }
  }
  return m;
}

}  // namespace bifrost
