// Structural equality of generic Avro values (for tests, fuzzing and round-trip checks).
#include <bit>
#include <cstdint>

#include "skade/avro/avro.h"
#include "skade/avro/avro_internal.h"

namespace skade::avro::internal {

bool SameValue(const Value& a, const Value& b) {
  if (a.branch != b.branch || a.data.index() != b.data.index()) return false;
  if (const auto* fa = std::get_if<float>(&a.data)) {
    return std::bit_cast<uint32_t>(*fa) == std::bit_cast<uint32_t>(std::get<float>(b.data));
  }
  if (const auto* da = std::get_if<double>(&a.data)) {
    return std::bit_cast<uint64_t>(*da) == std::bit_cast<uint64_t>(std::get<double>(b.data));
  }
  if (const auto* la = std::get_if<Value::List>(&a.data)) {
    const auto& lb = std::get<Value::List>(b.data);
    if (la->size() != lb.size()) return false;
    for (size_t i = 0; i < la->size(); ++i) {
      if (!SameValue((*la)[i], lb[i])) return false;
    }
    return true;
  }
  if (const auto* ma = std::get_if<Value::MapEntries>(&a.data)) {
    const auto& mb = std::get<Value::MapEntries>(b.data);
    if (ma->size() != mb.size()) return false;
    for (size_t i = 0; i < ma->size(); ++i) {
      if ((*ma)[i].first != mb[i].first || !SameValue((*ma)[i].second, mb[i].second)) {
        return false;
      }
    }
    return true;
  }
  if (const auto* sa = std::get_if<std::string>(&a.data)) {
    return *sa == std::get<std::string>(b.data);
  }
  if (const auto* ia = std::get_if<int32_t>(&a.data)) return *ia == std::get<int32_t>(b.data);
  if (const auto* la = std::get_if<int64_t>(&a.data)) return *la == std::get<int64_t>(b.data);
  if (const auto* ba = std::get_if<bool>(&a.data)) return *ba == std::get<bool>(b.data);
  return true;  // both null
}

}  // namespace skade::avro::internal
