#include "bifrost/sink/bulk_graph.h"

#include <arrow/api.h>

#include <cstring>

#include "bifrost/sink/property_values.h"
#include "skade/common/flat_index.h"
#include "skade/format/value.h"
#include "skade/table/arrow_values.h"

namespace bifrost {

namespace {

using skade::TypeId;

// GRAPH.BULK's value tags (FalkorDB's bulk-insert format).
enum Tag : char { kNull = 0, kBool = 1, kDouble = 2, kString = 3, kLong = 4, kArray = 5 };

template <typename T>
void AppendRaw(std::string& out, T v) {
  char bytes[sizeof v];
  std::memcpy(bytes, &v, sizeof v);  // the server reads host (little-endian) order
  out.append(bytes, sizeof v);
}

void AppendLong(std::string& out, int64_t v) {
  out += kLong;
  AppendRaw(out, v);
}

Status AppendText(std::string& out, std::string_view s, const std::string& name) {
  SKADE_RETURN_IF_ERROR(CheckStorableText(s, name));
  out += kString;
  out.append(s);
  out += '\0';
  return {};
}

Status AppendDouble(std::string& out, double d, const std::string& name) {
  SKADE_RETURN_IF_ERROR(CheckStorableDouble(d, name));
  out += kDouble;
  AppendRaw(out, d);
  return {};
}

// One non-null primitive, in the same forms the MERGE path's literals give: numbers and
// booleans native, every other type as its text form.
Status AppendPrimitive(std::string& out, const arrow::Array& a, int64_t i, const skade::Type& type,
                       const std::string& name) {
  switch (type.id) {
    case TypeId::kBoolean:
      if (a.type_id() != arrow::Type::BOOL) break;
      out += kBool;
      out += static_cast<char>(static_cast<const arrow::BooleanArray&>(a).Value(i));
      return {};
    case TypeId::kInt:
      if (a.type_id() != arrow::Type::INT32) break;
      AppendLong(out, static_cast<const arrow::Int32Array&>(a).Value(i));
      return {};
    case TypeId::kLong:
      if (a.type_id() != arrow::Type::INT64) break;
      AppendLong(out, static_cast<const arrow::Int64Array&>(a).Value(i));
      return {};
    case TypeId::kFloat:
      if (a.type_id() != arrow::Type::FLOAT) break;
      return AppendDouble(out, static_cast<const arrow::FloatArray&>(a).Value(i), name);
    case TypeId::kDouble:
      if (a.type_id() != arrow::Type::DOUBLE) break;
      return AppendDouble(out, static_cast<const arrow::DoubleArray&>(a).Value(i), name);
    case TypeId::kString:
      if (a.type_id() != arrow::Type::STRING) break;
      return AppendText(out, static_cast<const arrow::StringArray&>(a).GetView(i), name);
    default:
      break;
  }
  // Other types, and arrays of an unexpected width, go through the boxed value.
  SKADE_ASSIGN_OR_RETURN(auto v, skade::ValueAt(a, i, type));
  switch (type.id) {
    case TypeId::kBoolean:
      out += kBool;
      out += static_cast<char>(std::get<bool>(v));
      return {};
    case TypeId::kInt:
      AppendLong(out, std::get<int32_t>(v));
      return {};
    case TypeId::kLong:
      AppendLong(out, std::get<int64_t>(v));
      return {};
    case TypeId::kFloat:
      return AppendDouble(out, std::get<float>(v), name);
    case TypeId::kDouble:
      return AppendDouble(out, std::get<double>(v), name);
    default:
      return AppendText(out, skade::FormatValue(type, v), name);
  }
}

// A cell as a tagged value; a null is kNull (GRAPH.BULK then sets nothing).
Status AppendCell(std::string& out, const arrow::Array& a, int64_t i, const skade::Type& type,
                  const std::string& name) {
  if (a.IsNull(i)) {
    out += kNull;
    return {};
  }
  if (type.id != TypeId::kList) return AppendPrimitive(out, a, i, type, name);
  const auto& list = static_cast<const arrow::ListArray&>(a);
  const arrow::Array& values = *list.values();
  out += kArray;
  AppendRaw(out, static_cast<int64_t>(list.value_length(i)));
  for (int64_t j = list.value_offset(i); j < list.value_offset(i + 1); ++j) {
    if (values.IsNull(j)) return NullListElement(name);
    SKADE_RETURN_IF_ERROR(AppendPrimitive(out, values, j, *type.element().type, name));
  }
  return {};
}

// Bytes of the tagged value at `p` (records are ours, so they are well formed).
size_t ValueSize(const char* p) {
  switch (p[0]) {
    case kNull:
      return 1;
    case kBool:
      return 2;
    case kDouble:
    case kLong:
      return 9;
    case kString:
      return 2 + std::strlen(p + 1);
    default: {
      int64_t n;
      std::memcpy(&n, p + 1, sizeof n);
      size_t size = 9;
      for (int64_t k = 0; k < n; ++k) size += ValueSize(p + size);
      return size;
    }
  }
}

// A node as 24 bits of label and 40 of position in it.
constexpr int kLocalBits = 40;
uint64_t NodeRef(size_t label, uint64_t local) { return (uint64_t{label} << kLocalBits) | local; }

// Entities of one label or relationship type: a record per entity holding one tagged
// value per property slot (the keys first). A record may stop short of the slots a
// later set added; the missing ones are nulls.
struct Records {
  std::string name;
  std::vector<std::string> keys;
  std::vector<std::string> slots;
  std::unordered_map<std::string, uint32_t> slot_of;
  std::string arena;
  std::vector<uint64_t> at;
  std::vector<uint32_t> size;

  Records(std::string n, std::vector<std::string> k) : name(std::move(n)), keys(std::move(k)) {
    for (const auto& key : keys) Slot(key);
  }
  uint32_t Slot(const std::string& property) {
    auto [it, added] = slot_of.emplace(property, static_cast<uint32_t>(slots.size()));
    if (added) slots.push_back(property);
    return it->second;
  }
  /// Whether entity `e`'s record starts with the tagged `key` (tagged values end where
  /// their tag says, so equal bytes are equal values).
  bool KeyIs(uint64_t e, std::string_view key) const {
    return size[e] >= key.size() && std::memcmp(arena.data() + at[e], key.data(), key.size()) == 0;
  }
  uint64_t Append(std::string_view record) {
    at.push_back(arena.size());
    size.push_back(static_cast<uint32_t>(record.size()));
    arena.append(record);
    return at.size() - 1;
  }
  /// Overwrites some slots of entity `e` (a null value removes the property).
  void Update(uint64_t e, const std::vector<std::pair<uint32_t, std::string_view>>& values) {
    std::vector<std::string_view> current;
    const char* p = arena.data() + at[e];
    const char* end = p + size[e];
    while (p < end) {
      size_t n = ValueSize(p);
      current.emplace_back(p, n);
      p += n;
    }
    static constexpr char kNullByte = kNull;
    for (const auto& [slot, value] : values) {
      if (slot >= current.size()) current.resize(slot + 1, std::string_view(&kNullByte, 1));
      current[slot] = value;
    }
    std::string merged;
    for (auto v : current) merged.append(v);
    at[e] = arena.size();
    size[e] = static_cast<uint32_t>(merged.size());
    arena += merged;
  }
  /// The GRAPH.BULK header: name, property count, property names.
  std::string Header() const {
    std::string h = name + '\0';
    AppendRaw(h, static_cast<uint32_t>(slots.size()));
    for (const auto& s : slots) h += s + '\0';
    return h;
  }
  /// Appends entity `e`'s record, padded with nulls to every slot.
  void AppendPadded(std::string& out, uint64_t e) const {
    std::string_view r(arena.data() + at[e], size[e]);
    out.append(r);
    size_t have = 0;
    for (size_t p = 0; p < r.size(); p += ValueSize(r.data() + p)) ++have;
    out.append(slots.size() - have, kNull);
  }
};

}  // namespace

struct BulkGraph::Label : Records {
  using Records::Records;
  size_t number = 0;  // its place among the labels: the high bits of its NodeRefs
  // A key that is one integer is its own hash, which the index's mixing keeps
  // one-to-one, so it needs no comparison; other keys are compared with the record.
  skade::FlatIndex by_long;
  skade::FlatIndex by_key;

  /// The node with tagged key `key`; `make` gives the record of a new one.
  template <typename Make>
  std::pair<uint64_t, bool> Find(std::string_view key, Make make) {
    auto [e, added] =
        key.size() == 9 && key[0] == kLong
            ? by_long.FindOrAdd(Long(key), at.size(), [](uint64_t) { return true; })
            : by_key.FindOrAdd(std::hash<std::string_view>{}(key), at.size(),
                               [&](uint64_t x) { return KeyIs(x, key); });
    if (added) Append(make());
    return {e, added};
  }
  static uint64_t Long(std::string_view key) {
    uint64_t v;
    std::memcpy(&v, key.data() + 1, sizeof v);
    return v;
  }
};

struct BulkGraph::RelType : Records {
  using Records::Records;
  skade::FlatIndex by_key;         // hash of endpoints and tagged edge key → entity
  std::vector<uint64_t> src, dst;  // NodeRefs

  template <typename Make>
  std::pair<uint64_t, bool> Find(uint64_t from, uint64_t to, std::string_view key, Make make) {
    uint64_t h = std::hash<std::string_view>{}(key);
    h = (h ^ from) * 0x100000001b3ULL;
    h = (h ^ to) * 0x100000001b3ULL;
    auto [e, added] = by_key.FindOrAdd(
        h, at.size(), [&](uint64_t x) { return src[x] == from && dst[x] == to && KeyIs(x, key); });
    if (added) {
      Append(make());
      src.push_back(from);
      dst.push_back(to);
    }
    return {e, added};
  }
};

BulkGraph::BulkGraph() = default;
BulkGraph::~BulkGraph() = default;

namespace {

Status SameKeys(const Records& r, const std::vector<std::string>& keys, const char* what) {
  if (r.keys == keys) return {};
  auto list = [](const std::vector<std::string>& k) {
    std::string s;
    for (const auto& x : k) s += (s.empty() ? "" : ",") + x;
    return "(" + s + ")";
  };
  return skade::Unsupported(std::string(what) + " " + r.name + " is keyed by " + list(r.keys) +
                            " in one place and by " + list(keys) + " in another");
}

// The tagged key values of a row; a null key is refused.
Status EncodeKey(std::string& out, const arrow::Table& t, const std::vector<skade::TypePtr>& types,
                 size_t first, const std::vector<std::string>& names, int64_t row,
                 const std::string& owner) {
  out.clear();
  for (size_t c = 0; c < names.size(); ++c) {
    const arrow::Array& a = *t.column(first + c)->chunk(0);
    if (a.IsNull(row))
      return skade::InvalidArgument(owner + " key '" + names[c] + "' is null in row " +
                                    std::to_string(row));
    SKADE_RETURN_IF_ERROR(AppendCell(out, a, row, *types[first + c], names[c]));
  }
  return {};
}

// Encodes a row's property columns [first, first+names.size()) into `scratch` and lists
// them as (slot, value); counts the non-null ones.
Status EncodeProperties(std::string& scratch, std::vector<std::pair<uint32_t, std::string_view>>& out,
                        const arrow::Table& t, const std::vector<skade::TypePtr>& types,
                        size_t first, const std::vector<std::string>& names,
                        const std::vector<uint32_t>& slots, int64_t row, int64_t& set) {
  scratch.clear();
  std::vector<size_t> starts;
  for (size_t c = 0; c < names.size(); ++c) {
    starts.push_back(scratch.size());
    SKADE_RETURN_IF_ERROR(
        AppendCell(scratch, *t.column(first + c)->chunk(0), row, *types[first + c], names[c]));
    if (scratch[starts.back()] != kNull) ++set;
  }
  starts.push_back(scratch.size());
  out.clear();
  for (size_t c = 0; c < names.size(); ++c)
    out.emplace_back(slots[c],
                     std::string_view(scratch).substr(starts[c], starts[c + 1] - starts[c]));
  return {};
}

// A new entity's record: the tagged keys, then a value per slot up to the highest given.
std::string NewRecord(std::string_view key, size_t key_slots,
                      const std::vector<std::pair<uint32_t, std::string_view>>& values) {
  size_t slots = key_slots;
  for (const auto& [slot, v] : values) slots = std::max<size_t>(slots, slot + 1);
  std::vector<std::string_view> at(slots);
  for (const auto& [slot, v] : values) at[slot] = v;
  std::string record(key);
  for (size_t s = key_slots; s < slots; ++s) {
    if (at[s].empty())
      record += kNull;
    else
      record.append(at[s]);
  }
  return record;
}

Status CheckColumns(const std::vector<skade::TypePtr>& types, size_t first,
                    const std::vector<std::string>& names) {
  for (size_t c = 0; c < names.size(); ++c)
    SKADE_RETURN_IF_ERROR(CheckStorableType(*types[first + c], names[c]));
  return {};
}

}  // namespace

Result<BulkGraph::Label*> BulkGraph::LabelFor(const std::string& name,
                                              const std::vector<std::string>& keys) {
  size_t i = label_index_.emplace(name, labels_.size()).first->second;
  if (i == labels_.size()) {
    if (i >= (size_t{1} << (64 - kLocalBits))) return skade::Unsupported("too many labels");
    labels_.push_back(std::make_unique<Label>(name, keys));
    labels_.back()->number = i;
  }
  SKADE_RETURN_IF_ERROR(SameKeys(*labels_[i], keys, "label"));
  return labels_[i].get();
}

Result<BulkGraph::RelType*> BulkGraph::TypeFor(const std::string& name,
                                               const std::vector<std::string>& keys) {
  size_t i = type_index_.emplace(name, types_.size()).first->second;
  if (i == types_.size()) types_.push_back(std::make_unique<RelType>(name, keys));
  SKADE_RETURN_IF_ERROR(SameKeys(*types_[i], keys, "relationship type"));
  return types_[i].get();
}

Result<SinkReport> BulkGraph::Add(const GraphMutation& m) {
  if (!m.edge_deletes.empty() || !m.vertex_deletes.empty())
    return skade::Unsupported("a new graph is built from upserts only; this round deletes");
  SinkReport report;
  std::string key, scratch;
  std::vector<std::pair<uint32_t, std::string_view>> values;

  // Finds the node of a label with tagged key `key`, adding a key-only one if missing.
  auto node = [&](Label& label) -> uint64_t {
    auto [e, added] = label.Find(key, [&] { return key; });
    if (added) {
      ++report.nodes_created;
      report.properties_set += static_cast<int64_t>(label.keys.size());
    }
    return NodeRef(label.number, e);
  };

  for (const auto& v : m.vertices) {
    const arrow::Table& t = *v.rows;
    if (t.num_rows() == 0) continue;
    SKADE_RETURN_IF_ERROR(CheckColumns(v.types, v.keys.size(), v.properties));
    SKADE_ASSIGN_OR_RETURN(Label * label, LabelFor(v.label, v.keys));
    std::vector<uint32_t> slots;
    for (const auto& p : v.properties) slots.push_back(label->Slot(p));
    for (int64_t row = 0; row < t.num_rows(); ++row) {
      SKADE_RETURN_IF_ERROR(EncodeKey(key, t, v.types, 0, v.keys, row, "label " + v.label));
      SKADE_RETURN_IF_ERROR(EncodeProperties(scratch, values, t, v.types, v.keys.size(),
                                             v.properties, slots, row, report.properties_set));
      auto [e, added] = label->Find(key, [&] { return NewRecord(key, v.keys.size(), values); });
      if (added) {
        ++report.nodes_created;
        report.properties_set += static_cast<int64_t>(v.keys.size());
      } else {
        label->Update(e, values);
      }
    }
    report.vertex_rows += t.num_rows();
  }

  for (const auto& e : m.edges) {
    const arrow::Table& t = *e.rows;
    if (t.num_rows() == 0) continue;
    size_t sk = e.src_keys.size(), dk = e.dst_keys.size(), ek = e.edge_keys.size();
    SKADE_RETURN_IF_ERROR(CheckColumns(e.types, sk + dk + ek, e.properties));
    SKADE_ASSIGN_OR_RETURN(Label * src, LabelFor(e.src_label, e.src_keys));
    SKADE_ASSIGN_OR_RETURN(Label * dst, LabelFor(e.dst_label, e.dst_keys));
    SKADE_ASSIGN_OR_RETURN(RelType * type, TypeFor(e.type, e.edge_keys));
    std::vector<uint32_t> slots;
    for (const auto& p : e.properties) slots.push_back(type->Slot(p));
    std::string edge_key;
    for (int64_t row = 0; row < t.num_rows(); ++row) {
      SKADE_RETURN_IF_ERROR(EncodeKey(key, t, e.types, 0, e.src_keys, row, "edge " + e.type));
      uint64_t from = node(*src);
      SKADE_RETURN_IF_ERROR(EncodeKey(key, t, e.types, sk, e.dst_keys, row, "edge " + e.type));
      uint64_t to = node(*dst);
      SKADE_RETURN_IF_ERROR(EncodeKey(edge_key, t, e.types, sk + dk, e.edge_keys, row,
                                      "edge " + e.type));
      SKADE_RETURN_IF_ERROR(EncodeProperties(scratch, values, t, e.types, sk + dk + ek,
                                             e.properties, slots, row, report.properties_set));
      auto [x, added] =
          type->Find(from, to, edge_key, [&] { return NewRecord(edge_key, ek, values); });
      if (added) {
        ++report.relationships_created;
        report.properties_set += static_cast<int64_t>(ek);
      } else {
        type->Update(x, values);
      }
    }
    report.edge_rows += t.num_rows();
  }
  return report;
}

int64_t BulkGraph::NodeCount() const {
  int64_t n = 0;
  for (const auto& l : labels_) n += static_cast<int64_t>(l->at.size());
  return n;
}

int64_t BulkGraph::EdgeCount() const {
  int64_t n = 0;
  for (const auto& t : types_) n += static_cast<int64_t>(t->at.size());
  return n;
}

LabelKeys BulkGraph::Labels() const {
  LabelKeys out;
  for (const auto& l : labels_) out.emplace_back(l->name, l->keys);
  return out;
}

Status BulkGraph::ForEachCall(size_t max_call_bytes,
                              const std::function<Status(BulkCall&)>& send) const {
  BulkCall call;
  size_t call_bytes = 0;
  auto flush = [&]() -> Status {
    if (call.node_blobs.empty() && call.edge_blobs.empty()) return {};
    SKADE_RETURN_IF_ERROR(send(call));
    call = BulkCall{};
    call_bytes = 0;
    return {};
  };
  // Appends entities [0, count) of `r` as blobs with `r`'s header, `write` giving each
  // entity's bytes; `blobs`/`counter` are the call's node or edge side.
  auto emit = [&](const Records& r, bool nodes, const std::function<void(std::string&, uint64_t)>& write)
      -> Status {
    std::string header = r.Header();
    std::string blob;
    for (uint64_t e = 0; e < r.at.size(); ++e) {
      if (blob.empty()) blob = header;
      write(blob, e);
      (nodes ? call.nodes : call.edges) += 1;
      if (call_bytes + blob.size() >= max_call_bytes) {
        call_bytes += blob.size();
        (nodes ? call.node_blobs : call.edge_blobs).push_back(std::move(blob));
        blob.clear();
        SKADE_RETURN_IF_ERROR(flush());
      }
    }
    if (blob.empty()) return {};
    call_bytes += blob.size();
    (nodes ? call.node_blobs : call.edge_blobs).push_back(std::move(blob));
    return {};
  };

  std::vector<uint64_t> base;  // the first node id of each label: nodes are numbered in order
  uint64_t next = 0;
  for (const auto& l : labels_) {
    base.push_back(next);
    next += l->at.size();
    SKADE_RETURN_IF_ERROR(
        emit(*l, true, [&](std::string& out, uint64_t e) { l->AppendPadded(out, e); }));
  }
  // A call holds nodes or edges, not both, so every edge's nodes exist when it lands.
  SKADE_RETURN_IF_ERROR(flush());
  auto node_id = [&](uint64_t ref) {
    return base[ref >> kLocalBits] + (ref & ((uint64_t{1} << kLocalBits) - 1));
  };
  for (const auto& t : types_) {
    SKADE_RETURN_IF_ERROR(emit(*t, false, [&](std::string& out, uint64_t e) {
      AppendRaw(out, node_id(t->src[e]));
      AppendRaw(out, node_id(t->dst[e]));
      t->AppendPadded(out, e);
    }));
  }
  return flush();
}

}  // namespace bifrost
