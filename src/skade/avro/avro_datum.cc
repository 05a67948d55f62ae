// Avro binary encoding of one datum (Value) against a schema (Node).
#include <algorithm>
#include <string>

#include "skade/avro/avro.h"
#include "skade/avro/avro_internal.h"

namespace skade::avro {
namespace {

using internal::DecodeContext;
using internal::Reader;
using internal::WriteBytes;
using internal::WriteLittleEndian;
using internal::WriteLong;

std::unexpected<Error> Mismatch(const Node& schema, std::string_view expected) {
  std::string msg = "value does not match schema: expected " + std::string(expected);
  if (!schema.name.empty()) msg += " for '" + schema.name + "'";
  return InvalidArgument(std::move(msg));
}

template <typename T>
const T* As(const Value& v) {
  return std::get_if<T>(&v.data);
}

Status EncodeImpl(const Node& schema, const Value& value, std::string* out) {
  switch (schema.kind) {
    case NodeKind::kNull:
      if (!value.is_null()) return Mismatch(schema, "null");
      return {};
    case NodeKind::kBoolean: {
      const bool* b = As<bool>(value);
      if (!b) return Mismatch(schema, "boolean");
      out->push_back(*b ? '\1' : '\0');
      return {};
    }
    case NodeKind::kInt:
    case NodeKind::kEnum: {
      const int32_t* i = As<int32_t>(value);
      if (!i) return Mismatch(schema, schema.kind == NodeKind::kInt ? "int" : "enum index");
      if (schema.kind == NodeKind::kEnum &&
          (*i < 0 || static_cast<size_t>(*i) >= schema.symbols.size())) {
        return InvalidArgument("enum index " + std::to_string(*i) + " out of range for '" +
                               schema.name + "'");
      }
      WriteLong(*i, out);
      return {};
    }
    case NodeKind::kLong: {
      // An int is accepted where a long is expected: the widening is lossless.
      if (const int64_t* l = As<int64_t>(value)) {
        WriteLong(*l, out);
      } else if (const int32_t* i = As<int32_t>(value)) {
        WriteLong(*i, out);
      } else {
        return Mismatch(schema, "long");
      }
      return {};
    }
    case NodeKind::kFloat: {
      const float* f = As<float>(value);
      if (!f) return Mismatch(schema, "float");
      WriteLittleEndian(*f, out);
      return {};
    }
    case NodeKind::kDouble: {
      if (const double* d = As<double>(value)) {
        WriteLittleEndian(*d, out);
      } else if (const float* f = As<float>(value)) {
        WriteLittleEndian(static_cast<double>(*f), out);
      } else {
        return Mismatch(schema, "double");
      }
      return {};
    }
    case NodeKind::kBytes:
    case NodeKind::kString: {
      const std::string* s = As<std::string>(value);
      if (!s) return Mismatch(schema, schema.kind == NodeKind::kBytes ? "bytes" : "string");
      WriteBytes(*s, out);
      return {};
    }
    case NodeKind::kFixed: {
      const std::string* s = As<std::string>(value);
      if (!s) return Mismatch(schema, "fixed");
      if (s->size() != static_cast<size_t>(schema.fixed_size)) {
        return InvalidArgument("fixed '" + schema.name + "' needs " +
                               std::to_string(schema.fixed_size) + " bytes, got " +
                               std::to_string(s->size()));
      }
      out->append(*s);
      return {};
    }
    case NodeKind::kRecord: {
      const Value::List* fields = As<Value::List>(value);
      if (!fields) return Mismatch(schema, "record");
      if (fields->size() != schema.fields.size()) {
        return InvalidArgument("record '" + schema.name + "' has " +
                               std::to_string(schema.fields.size()) + " fields, value has " +
                               std::to_string(fields->size()));
      }
      for (size_t i = 0; i < fields->size(); ++i) {
        SKADE_RETURN_IF_ERROR_CTX(EncodeImpl(*schema.fields[i].type, (*fields)[i], out),
                                  "field '" + schema.fields[i].name + "'");
      }
      return {};
    }
    case NodeKind::kArray: {
      const Value::List* items = As<Value::List>(value);
      if (!items) return Mismatch(schema, "array");
      if (!items->empty()) {
        WriteLong(static_cast<int64_t>(items->size()), out);
        for (const Value& item : *items) {
          SKADE_RETURN_IF_ERROR(EncodeImpl(*schema.items, item, out));
        }
      }
      out->push_back('\0');
      return {};
    }
    case NodeKind::kMap: {
      const Value::MapEntries* entries = As<Value::MapEntries>(value);
      if (!entries) return Mismatch(schema, "map");
      if (!entries->empty()) {
        WriteLong(static_cast<int64_t>(entries->size()), out);
        for (const auto& [key, item] : *entries) {
          WriteBytes(key, out);
          SKADE_RETURN_IF_ERROR_CTX(EncodeImpl(*schema.items, item, out), "map key '" + key + "'");
        }
      }
      out->push_back('\0');
      return {};
    }
    case NodeKind::kUnion: {
      int branch = value.branch;
      const Value* inner = nullptr;
      if (branch >= 0) {
        const Value::List* l = As<Value::List>(value);
        if (!l || l->size() != 1) return Mismatch(schema, "union (branch + one value)");
        inner = &(*l)[0];
      } else if (value.is_null()) {
        // Convenience: a bare null selects the union's null branch.
        for (size_t i = 0; i < schema.branches.size(); ++i) {
          if (schema.branches[i]->kind == NodeKind::kNull) branch = static_cast<int>(i);
        }
        inner = &value;
      }
      if (branch < 0 || static_cast<size_t>(branch) >= schema.branches.size()) {
        return InvalidArgument("union branch " + std::to_string(branch) + " out of range");
      }
      WriteLong(branch, out);
      return EncodeImpl(*schema.branches[branch], *inner, out);
    }
  }
  return InvalidArgument("unknown schema kind");
}

/// Reads one array/map block header: item count (0 ends), with the byte size that follows
/// a negative count skipped.
Result<int64_t> ReadBlockCount(Reader& r) {
  SKADE_ASSIGN_OR_RETURN(int64_t count, r.ReadLong());
  if (count < 0) {
    if (count == INT64_MIN) return Corrupt(r.At("block count overflows"));
    count = -count;
    SKADE_ASSIGN_OR_RETURN(size_t byte_size, r.ReadLength("block"));
    (void)byte_size;
  }
  return count;
}

/// Rejects an item count that cannot fit in the remaining bytes before anything is
/// reserved. Zero-width items are bounded by the context's value budget instead.
Status CheckCount(int64_t count, bool zero_width, const Reader& r, DecodeContext& ctx) {
  if (zero_width) return ctx.Charge(static_cast<uint64_t>(count));
  if (static_cast<uint64_t>(count) > r.remaining()) {
    return Corrupt(r.At("block of " + std::to_string(count) + " items exceeds remaining " +
                        std::to_string(r.remaining()) + " bytes"));
  }
  return {};
}

/// Grows `v` for `count` more items without trusting a hostile count too far: the first
/// reservation is capped, later growth is geometric (amortized linear, never quadratic).
template <typename Vec>
void ReserveMore(Vec& v, int64_t count) {
  constexpr size_t kMaxUpfront = 1024;
  const size_t want = v.size() + std::min(static_cast<size_t>(count), kMaxUpfront);
  if (v.capacity() < want) v.reserve(std::max(want, v.capacity() * 2));
}

}  // namespace

namespace internal {

bool IsZeroWidth(const Node& schema) {
  switch (schema.kind) {
    case NodeKind::kNull:
      return true;
    case NodeKind::kFixed:
      return schema.fixed_size == 0;
    case NodeKind::kRecord:
      for (const auto& f : schema.fields) {
        if (!IsZeroWidth(*f.type)) return false;
      }
      return true;
    default:
      return false;
  }
}

Result<Value> DecodeValue(const Node& schema, Reader& r, DecodeContext& ctx, int depth) {
  if (depth > kMaxDepth) return Corrupt("datum nested too deeply");
  SKADE_RETURN_IF_ERROR(ctx.Charge());
  switch (schema.kind) {
    case NodeKind::kNull:
      return Value::Null();
    case NodeKind::kBoolean: {
      SKADE_ASSIGN_OR_RETURN(std::string_view b, r.ReadRaw(1));
      if (b[0] != 0 && b[0] != 1) return Corrupt(r.At("invalid boolean byte"));
      return Value::Bool(b[0] == 1);
    }
    case NodeKind::kInt: {
      SKADE_ASSIGN_OR_RETURN(int32_t v, r.ReadInt());
      return Value::Int(v);
    }
    case NodeKind::kLong: {
      SKADE_ASSIGN_OR_RETURN(int64_t v, r.ReadLong());
      return Value::Long(v);
    }
    case NodeKind::kFloat: {
      SKADE_ASSIGN_OR_RETURN(float v, r.ReadLittleEndian<float>());
      return Value::Float(v);
    }
    case NodeKind::kDouble: {
      SKADE_ASSIGN_OR_RETURN(double v, r.ReadLittleEndian<double>());
      return Value::Double(v);
    }
    case NodeKind::kBytes:
    case NodeKind::kString: {
      SKADE_ASSIGN_OR_RETURN(std::string_view v, r.ReadBytes());
      return Value::Bytes(std::string(v));
    }
    case NodeKind::kFixed: {
      SKADE_ASSIGN_OR_RETURN(std::string_view v, r.ReadRaw(static_cast<size_t>(schema.fixed_size)));
      return Value::Bytes(std::string(v));
    }
    case NodeKind::kEnum: {
      SKADE_ASSIGN_OR_RETURN(int32_t v, r.ReadInt());
      if (v < 0 || static_cast<size_t>(v) >= schema.symbols.size()) {
        return Corrupt(r.At("enum index " + std::to_string(v) + " out of range"));
      }
      return Value::Int(v);
    }
    case NodeKind::kRecord: {
      Value::List fields;
      fields.reserve(schema.fields.size());
      for (const auto& f : schema.fields) {
        SKADE_ASSIGN_OR_RETURN(Value v, DecodeValue(*f.type, r, ctx, depth + 1));
        fields.push_back(std::move(v));
      }
      return Value::Record(std::move(fields));
    }
    case NodeKind::kArray: {
      Value::List items;
      bool zero_width = false, zero_width_known = false;
      while (true) {
        SKADE_ASSIGN_OR_RETURN(int64_t count, ReadBlockCount(r));
        if (count == 0) break;
        if (!zero_width_known) {
          zero_width = IsZeroWidth(*schema.items);
          zero_width_known = true;
        }
        SKADE_RETURN_IF_ERROR(CheckCount(count, zero_width, r, ctx));
        ReserveMore(items, count);
        for (int64_t i = 0; i < count; ++i) {
          SKADE_ASSIGN_OR_RETURN(Value v, DecodeValue(*schema.items, r, ctx, depth + 1));
          items.push_back(std::move(v));
        }
      }
      return Value::Array(std::move(items));
    }
    case NodeKind::kMap: {
      Value::MapEntries entries;
      while (true) {
        SKADE_ASSIGN_OR_RETURN(int64_t count, ReadBlockCount(r));
        if (count == 0) break;
        // Every entry holds at least its key's length byte.
        SKADE_RETURN_IF_ERROR(CheckCount(count, false, r, ctx));
        ReserveMore(entries, count);
        for (int64_t i = 0; i < count; ++i) {
          SKADE_ASSIGN_OR_RETURN(std::string_view key, r.ReadBytes());
          SKADE_ASSIGN_OR_RETURN(Value v, DecodeValue(*schema.items, r, ctx, depth + 1));
          entries.emplace_back(std::string(key), std::move(v));
        }
      }
      return Value{std::move(entries)};
    }
    case NodeKind::kUnion: {
      SKADE_ASSIGN_OR_RETURN(int64_t branch, r.ReadLong());
      if (branch < 0 || static_cast<uint64_t>(branch) >= schema.branches.size()) {
        return Corrupt(r.At("union branch " + std::to_string(branch) + " out of range"));
      }
      SKADE_ASSIGN_OR_RETURN(Value v, DecodeValue(*schema.branches[branch], r, ctx, depth + 1));
      // Not Value::Union: its initializer list would deep-copy `v`.
      Value::List wrapped;
      wrapped.push_back(std::move(v));
      Value u{std::move(wrapped)};
      u.branch = static_cast<int>(branch);
      return u;
    }
  }
  return Corrupt("unknown schema kind");
}

}  // namespace internal

Status Encode(const Node& schema, const Value& value, std::string* out) {
  return EncodeImpl(schema, value, out);
}

Result<Value> Decode(const Node& schema, std::string_view bytes, size_t* pos) {
  if (*pos > bytes.size()) return Corrupt("decode position past the end of the input");
  Reader reader(bytes, *pos);
  DecodeContext ctx;
  ctx.bytes_seen = reader.remaining();
  SKADE_ASSIGN_OR_RETURN(Value v, internal::DecodeValue(schema, reader, ctx));
  *pos = reader.pos();
  return v;
}

}  // namespace skade::avro
