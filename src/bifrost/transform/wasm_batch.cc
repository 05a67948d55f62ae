// Bifröst's columnar batch layout for WASM guests (README, "WASM guests"), the host side.
#include "bifrost/transform/wasm_batch.h"

#include <arrow/api.h>
#include <arrow/compute/api.h>

#include <cstring>

#include "skade/table/arrow_internal.h"

namespace bifrost {
namespace {

// The batch layout: a header, one descriptor per column, then the sections the
// descriptors point at (offsets from the batch's start).
constexpr uint32_t kMagic = 0x31424642;  // "BFB1"
enum ColumnType : uint32_t { kInt64 = 1, kFloat64 = 2, kUtf8 = 3, kBool = 4 };
struct Header {
  uint32_t magic, ncols;
  uint64_t nrows;
};
struct Descriptor {
  uint32_t type, name_len, name_off, valid_off, values_off, data_off, data_len, reserved;
};
static_assert(sizeof(Header) == 16 && sizeof(Descriptor) == 32);

template <typename Builder, typename T>
arrow::Status DecodeFixed(const uint8_t* values, const uint8_t* valid, int64_t n,
                          std::shared_ptr<arrow::Array>* out) {
  Builder b;
  ARROW_RETURN_NOT_OK(b.Reserve(n));
  for (int64_t r = 0; r < n; ++r) {
    T v;
    std::memcpy(&v, values + r * 8, 8);
    ARROW_RETURN_NOT_OK(valid[r] ? b.Append(v) : b.AppendNull());
  }
  return b.Finish(out);
}

}  // namespace

using skade::Result;

// Arrow columns → one batch in host memory, ready to copy into the guest.
Result<std::string> EncodeBatch(const arrow::Table& table) {
  SKADE_ARROW_ASSIGN(auto batch, table.CombineChunksToBatch(), "combining the step's rows");
  auto n = static_cast<uint64_t>(batch->num_rows());
  std::vector<std::shared_ptr<arrow::Array>> cols;
  std::vector<uint32_t> types;
  for (int i = 0; i < batch->num_columns(); ++i) {
    auto col = batch->column(i);
    const auto& t = *col->type();
    uint32_t type;
    std::shared_ptr<arrow::DataType> as;
    if (arrow::is_integer(t.id())) {
      type = kInt64, as = arrow::int64();
    } else if (arrow::is_floating(t.id())) {
      type = kFloat64, as = arrow::float64();
    } else if (t.id() == arrow::Type::STRING || t.id() == arrow::Type::LARGE_STRING) {
      type = kUtf8, as = arrow::utf8();
    } else if (t.id() == arrow::Type::BOOL) {
      type = kBool, as = arrow::boolean();
    } else {
      return skade::InvalidArgument("column '" + batch->column_name(i) + "' has type " +
                                    t.ToString() +
                                    ", which a WASM guest cannot be given (integers, floats, "
                                    "strings, booleans); leave it out of the step's 'columns'");
    }
    if (!col->type()->Equals(*as)) {
      SKADE_ARROW_ASSIGN(auto cast, arrow::compute::Cast(col, as), "column " + batch->column_name(i));
      col = cast.make_array();
    }
    cols.push_back(col);
    types.push_back(type);
  }
  std::string out(sizeof(Header) + sizeof(Descriptor) * cols.size(), '\0');
  auto put = [&](const void* p, size_t len) -> Result<uint32_t> {
    out.resize((out.size() + 7) & ~size_t{7});
    if (out.size() + len > UINT32_MAX)
      return skade::InvalidArgument("the rows exceed the 4 GiB a WASM guest can address");
    auto at = static_cast<uint32_t>(out.size());
    out.append(static_cast<const char*>(p), len);
    return at;
  };
  std::vector<Descriptor> ds(cols.size());
  for (size_t i = 0; i < cols.size(); ++i) {
    Descriptor& d = ds[i];
    const auto& col = *cols[i];
    d.type = types[i];
    const std::string& name = batch->column_name(static_cast<int>(i));
    d.name_len = static_cast<uint32_t>(name.size());
    SKADE_ASSIGN_OR_RETURN(d.name_off, put(name.data(), name.size()));
    std::string valid(n, '\1');
    for (uint64_t r = 0; r < n; ++r) valid[r] = col.IsValid(static_cast<int64_t>(r)) ? 1 : 0;
    SKADE_ASSIGN_OR_RETURN(d.valid_off, put(valid.data(), valid.size()));
    if (d.type == kInt64 || d.type == kFloat64) {
      const auto& data = *col.data();
      SKADE_ASSIGN_OR_RETURN(d.values_off, put(data.buffers[1]->data() + data.offset * 8, n * 8));
    } else if (d.type == kBool) {
      const auto& b = static_cast<const arrow::BooleanArray&>(col);
      std::string v(n, '\0');
      for (uint64_t r = 0; r < n; ++r) v[r] = b.Value(static_cast<int64_t>(r)) ? 1 : 0;
      SKADE_ASSIGN_OR_RETURN(d.values_off, put(v.data(), v.size()));
    } else {
      const auto& s = static_cast<const arrow::StringArray&>(col);
      std::vector<uint32_t> offsets(n + 1);
      int32_t base = s.value_offset(0);
      for (uint64_t r = 0; r <= n; ++r)
        offsets[r] = static_cast<uint32_t>(s.value_offset(static_cast<int64_t>(r)) - base);
      SKADE_ASSIGN_OR_RETURN(d.values_off, put(offsets.data(), offsets.size() * 4));
      d.data_len = offsets[n];
      SKADE_ASSIGN_OR_RETURN(d.data_off, put(s.value_data()->data() + base, d.data_len));
    }
  }
  Header h{kMagic, static_cast<uint32_t>(cols.size()), n};
  std::memcpy(out.data(), &h, sizeof h);
  std::memcpy(out.data() + sizeof h, ds.data(), ds.size() * sizeof(Descriptor));
  return out;
}

// The guest's reply → an Arrow table. Every offset and length is checked against the
// reply's extent: a guest that writes garbage gets an error, never a host overread.
Result<std::shared_ptr<arrow::Table>> DecodeBatch(const uint8_t* p, uint64_t len) {
  auto bad = [](const std::string& what) {
    return skade::InvalidArgument("the guest's reply is not a batch: " + what);
  };
  auto within = [&](uint64_t off, uint64_t size) { return off <= len && size <= len - off; };
  if (len < sizeof(Header)) return bad("shorter than its header");
  Header h;
  std::memcpy(&h, p, sizeof h);
  if (h.magic != kMagic) return bad("wrong magic number");
  if (!within(sizeof h, uint64_t{h.ncols} * sizeof(Descriptor))) return bad("descriptors past its end");
  if (h.nrows > len) return bad(std::to_string(h.nrows) + " rows in " + std::to_string(len) + " bytes");
  const int64_t n = static_cast<int64_t>(h.nrows);
  arrow::FieldVector fields;
  arrow::ArrayVector arrays;
  for (uint32_t i = 0; i < h.ncols; ++i) {
    Descriptor d;
    std::memcpy(&d, p + sizeof h + i * sizeof d, sizeof d);
    std::string col = "column " + std::to_string(i);
    if (!within(d.name_off, d.name_len)) return bad(col + "'s name is past its end");
    std::string name(reinterpret_cast<const char*>(p + d.name_off), d.name_len);
    col = "column '" + name + "'";
    if (!within(d.valid_off, h.nrows)) return bad(col + "'s validity is past its end");
    const uint8_t* valid = p + d.valid_off;
    std::shared_ptr<arrow::Array> array;
    arrow::Status st;
    if (d.type == kInt64 || d.type == kFloat64) {
      if (!within(d.values_off, h.nrows * 8)) return bad(col + "'s values are past its end");
      st = d.type == kInt64
               ? DecodeFixed<arrow::Int64Builder, int64_t>(p + d.values_off, valid, n, &array)
               : DecodeFixed<arrow::DoubleBuilder, double>(p + d.values_off, valid, n, &array);
    } else if (d.type == kBool) {
      if (!within(d.values_off, h.nrows)) return bad(col + "'s values are past its end");
      arrow::BooleanBuilder b;
      for (int64_t r = 0; r < n && st.ok(); ++r)
        st = valid[r] ? b.Append(p[d.values_off + r] != 0) : b.AppendNull();
      if (st.ok()) st = b.Finish(&array);
    } else if (d.type == kUtf8) {
      if (!within(d.values_off, (h.nrows + 1) * 4)) return bad(col + "'s offsets are past its end");
      if (!within(d.data_off, d.data_len)) return bad(col + "'s bytes are past its end");
      arrow::StringBuilder b;
      for (int64_t r = 0; r < n && st.ok(); ++r) {
        uint32_t from, to;
        std::memcpy(&from, p + d.values_off + r * 4, 4);
        std::memcpy(&to, p + d.values_off + (r + 1) * 4, 4);
        if (from > to || to > d.data_len) return bad(col + " has a string outside its bytes");
        st = valid[r] ? b.Append(reinterpret_cast<const char*>(p + d.data_off + from), to - from)
                      : b.AppendNull();
      }
      if (st.ok()) st = b.Finish(&array);
    } else {
      return bad(col + " has type code " + std::to_string(d.type) +
                 " (1 int64, 2 float64, 3 utf8, 4 bool)");
    }
    if (!st.ok()) return std::unexpected(skade::FromArrow(st, "reading the guest's reply"));
    if (array->type_id() == arrow::Type::STRING) {
      if (auto v = array->ValidateFull(); !v.ok()) return bad(col + " is not UTF-8");
    }
    fields.push_back(arrow::field(name, array->type()));
    arrays.push_back(array);
  }
  return arrow::Table::Make(arrow::schema(fields), arrays, n);
}

}  // namespace bifrost
