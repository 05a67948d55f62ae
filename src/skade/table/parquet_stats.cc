#include "skade/table/parquet_stats.h"

#include <parquet/metadata.h>
#include <parquet/schema.h>
#include <parquet/statistics.h>

#include <cmath>
#include <cstring>
#include <optional>

#include "skade/common/utf8.h"
#include "skade/format/value.h"

namespace skade {
namespace {

// Strips sign-extension bytes from big-endian two's complement.
std::string MinimalBigEndian(std::string be) {
  size_t i = 0;
  while (i + 1 < be.size()) {
    unsigned char b = be[i], next = be[i + 1];
    if ((b == 0x00 && !(next & 0x80)) || (b == 0xff && (next & 0x80))) ++i;
    else break;
  }
  return be.substr(i);
}

std::string LittleToMinimalBigEndian(const std::string& le) {
  std::string be(le.rbegin(), le.rend());
  return MinimalBigEndian(be);
}

// Converts one plain-encoded Parquet min/max to Iceberg's single-value bytes.
std::optional<std::string> ToIcebergBound(const Type& type, parquet::Type::type physical,
                                          const std::string& plain) {
  switch (type.id) {
    case TypeId::kBoolean:
      if (plain.empty()) return std::nullopt;
      return std::string(1, (plain[0] & 1) ? '\x01' : '\x00');
    case TypeId::kFloat:
    case TypeId::kDouble: {
      if (physical == parquet::Type::FLOAT && plain.size() == 4) {
        float f;
        std::memcpy(&f, plain.data(), 4);
        if (std::isnan(f)) return std::nullopt;
      } else if (physical == parquet::Type::DOUBLE && plain.size() == 8) {
        double d;
        std::memcpy(&d, plain.data(), 8);
        if (std::isnan(d)) return std::nullopt;
      } else {
        return std::nullopt;
      }
      return plain;
    }
    case TypeId::kDecimal:
      if (physical == parquet::Type::INT32 || physical == parquet::Type::INT64)
        return LittleToMinimalBigEndian(plain);
      if (physical == parquet::Type::FIXED_LEN_BYTE_ARRAY || physical == parquet::Type::BYTE_ARRAY)
        return MinimalBigEndian(plain);
      return std::nullopt;
    case TypeId::kInt:
    case TypeId::kDate:
      if (physical != parquet::Type::INT32 || plain.size() != 4) return std::nullopt;
      return plain;
    case TypeId::kLong:
    case TypeId::kTime:
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz:
    case TypeId::kTimestampNs:
    case TypeId::kTimestampTzNs:
      if (physical == parquet::Type::INT64 && plain.size() == 8) return plain;
      if (physical == parquet::Type::INT32 && plain.size() == 4 && type.id == TypeId::kLong) return plain;
      return std::nullopt;
    case TypeId::kString:
    case TypeId::kBinary:
    case TypeId::kFixed:
    case TypeId::kUuid:
      if (physical != parquet::Type::BYTE_ARRAY && physical != parquet::Type::FIXED_LEN_BYTE_ARRAY)
        return std::nullopt;
      return plain;
    default:
      return std::nullopt;
  }
}

// Byte length of the first n UTF-8 code points of s.
size_t Utf8Prefix(const std::string& s, int n) {
  size_t i = 0;
  for (int cp = 0; cp < n && i < s.size(); ++cp) {
    unsigned char c = s[i];
    i += c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
  }
  return std::min(i, s.size());
}

std::optional<std::string> TruncateUpper(const std::string& s, bool utf8, int len) {
  size_t cut = utf8 ? Utf8Prefix(s, len) : std::min(s.size(), static_cast<size_t>(len));
  if (cut >= s.size()) return s;
  std::string t = s.substr(0, cut);
  if (!utf8) {
    while (!t.empty()) {
      unsigned char& b = reinterpret_cast<unsigned char&>(t.back());
      if (b < 0xff) {
        ++b;
        return t;
      }
      t.pop_back();
    }
    return std::nullopt;
  }
  // Increment the last code point that can be incremented (skipping surrogates).
  while (!t.empty()) {
    size_t start = t.size() - 1;
    while (start > 0 && (static_cast<unsigned char>(t[start]) & 0xC0) == 0x80) --start;
    const unsigned char* p = reinterpret_cast<const unsigned char*>(t.data() + start);
    size_t n = t.size() - start;
    uint32_t cp = n == 1 ? p[0]
                 : n == 2 ? ((p[0] & 0x1F) << 6) | (p[1] & 0x3F)
                 : n == 3 ? ((p[0] & 0x0F) << 12) | ((p[1] & 0x3F) << 6) | (p[2] & 0x3F)
                          : ((p[0] & 0x07) << 18) | ((p[1] & 0x3F) << 12) | ((p[2] & 0x3F) << 6) | (p[3] & 0x3F);
    uint32_t next = cp + 1;
    if (next >= 0xD800 && next <= 0xDFFF) next = 0xE000;
    t.resize(start);
    if (next <= 0x10FFFF) {
      AppendUtf8(t, next);
      return t;
    }
  }
  return std::nullopt;
}

struct Leaf {
  int field_id;
  const NestedField* field;
  bool repeated;
  parquet::Type::type physical;
};

std::vector<std::optional<Leaf>> Leaves(const parquet::FileMetaData& md, const Schema& schema) {
  const parquet::SchemaDescriptor* sd = md.schema();
  std::vector<std::optional<Leaf>> out(sd->num_columns());
  for (int i = 0; i < sd->num_columns(); ++i) {
    const parquet::ColumnDescriptor* cd = sd->Column(i);
    int id = cd->schema_node()->field_id();
    if (id < 0) continue;
    const NestedField* f = schema.FindField(id);
    if (!f) continue;
    out[i] = Leaf{id, f, cd->max_repetition_level() > 0, cd->physical_type()};
  }
  return out;
}

void CombineBound(std::map<int, std::string>& bounds, int id, const Type& type, std::string b,
                  bool lower) {
  auto it = bounds.find(id);
  if (it == bounds.end()) {
    bounds[id] = std::move(b);
    return;
  }
  auto a = DeserializeValue(type, it->second);
  auto c = DeserializeValue(type, b);
  if (!a || !c) return;
  int cmp = CompareValues(*c, *a);
  if ((lower && cmp < 0) || (!lower && cmp > 0)) it->second = std::move(b);
}

void AddRowGroup(const parquet::FileMetaData& md, int rg, const std::vector<std::optional<Leaf>>& leaves,
                 expr::ColumnStats* stats, std::map<int, int64_t>* sizes, bool bounds_for_repeated) {
  auto rgmd = md.RowGroup(rg);
  for (int c = 0; c < rgmd->num_columns(); ++c) {
    if (!leaves[c]) continue;
    const Leaf& leaf = *leaves[c];
    auto cc = rgmd->ColumnChunk(c);
    stats->value_counts[leaf.field_id] += cc->num_values();
    if (sizes) (*sizes)[leaf.field_id] += cc->total_compressed_size();
    std::shared_ptr<parquet::Statistics> st = cc->is_stats_set() ? cc->statistics() : nullptr;
    if (!st) {
      stats->lower_bounds.erase(leaf.field_id);
      continue;
    }
    if (st->HasNullCount()) stats->null_value_counts[leaf.field_id] += st->null_count();
    if (leaf.repeated && !bounds_for_repeated) continue;
    if (!st->HasMinMax()) continue;
    const Type& type = *leaf.field->type;
    auto lo = ToIcebergBound(type, leaf.physical, st->EncodeMin());
    auto hi = ToIcebergBound(type, leaf.physical, st->EncodeMax());
    if (lo) CombineBound(stats->lower_bounds, leaf.field_id, type, std::move(*lo), true);
    if (hi) CombineBound(stats->upper_bounds, leaf.field_id, type, std::move(*hi), false);
  }
}

}  // namespace

expr::ColumnStats RowGroupStats(const parquet::FileMetaData& md, int row_group, const Schema& schema) {
  expr::ColumnStats stats;
  stats.record_count = md.RowGroup(row_group)->num_rows();
  AddRowGroup(md, row_group, Leaves(md, schema), &stats, nullptr, false);
  return stats;
}

expr::ColumnStats PageStats(const parquet::EncodedStatistics& page, int64_t values, const NestedField& field,
                            int physical_type) {
  expr::ColumnStats stats;
  stats.record_count = values;
  stats.value_counts[field.id] = values;
  if (page.has_null_count) stats.null_value_counts[field.id] = page.null_count;
  if (page.has_min && page.has_max) {
    auto physical = static_cast<parquet::Type::type>(physical_type);
    auto lo = ToIcebergBound(*field.type, physical, page.min());
    auto hi = ToIcebergBound(*field.type, physical, page.max());
    if (lo && hi) {
      stats.lower_bounds[field.id] = std::move(*lo);
      stats.upper_bounds[field.id] = std::move(*hi);
    }
  }
  return stats;
}

FileMetrics ComputeFileMetrics(const parquet::FileMetaData& md, const Schema& schema,
                               int truncate_length) {
  FileMetrics m;
  m.stats.record_count = md.num_rows();
  auto leaves = Leaves(md, schema);
  for (int rg = 0; rg < md.num_row_groups(); ++rg) {
    AddRowGroup(md, rg, leaves, &m.stats, &m.column_sizes, false);
    auto rgmd = md.RowGroup(rg);
    if (rgmd->num_columns() > 0) {
      auto first = rgmd->ColumnChunk(0);
      int64_t off = first->has_dictionary_page() && first->dictionary_page_offset() > 0
                        ? first->dictionary_page_offset()
                        : first->data_page_offset();
      m.split_offsets.push_back(off);
    }
  }
  // A row group without min/max for a column makes the file's bounds unknown.
  for (int rg = 0; rg < md.num_row_groups(); ++rg) {
    auto rgmd = md.RowGroup(rg);
    for (int c = 0; c < rgmd->num_columns(); ++c) {
      if (!leaves[c]) continue;
      auto cc = rgmd->ColumnChunk(c);
      auto st = cc->is_stats_set() ? cc->statistics() : nullptr;
      int64_t nulls = st && st->HasNullCount() ? st->null_count() : -1;
      bool all_null = nulls >= 0 && nulls == cc->num_values();
      if ((!st || !st->HasMinMax()) && !all_null) {
        m.stats.lower_bounds.erase(leaves[c]->field_id);
        m.stats.upper_bounds.erase(leaves[c]->field_id);
      }
    }
  }
  // Truncate long string/binary bounds so manifests stay small.
  for (auto& [id, b] : m.stats.lower_bounds) {
    const NestedField* f = schema.FindField(id);
    if (!f) continue;
    if (f->type->id == TypeId::kString) b.resize(Utf8Prefix(b, truncate_length));
    else if (f->type->id == TypeId::kBinary && b.size() > static_cast<size_t>(truncate_length))
      b.resize(truncate_length);
  }
  for (auto it = m.stats.upper_bounds.begin(); it != m.stats.upper_bounds.end();) {
    const NestedField* f = schema.FindField(it->first);
    if (f && (f->type->id == TypeId::kString || f->type->id == TypeId::kBinary)) {
      auto t = TruncateUpper(it->second, f->type->id == TypeId::kString, truncate_length);
      if (!t) {
        it = m.stats.upper_bounds.erase(it);
        continue;
      }
      it->second = std::move(*t);
    }
    ++it;
  }
  return m;
}

}  // namespace skade
