#include "bifrost/sink/property_values.h"

#include <cmath>

namespace bifrost {

namespace {
skade::Status Refuse(const std::string& name, const std::string& what) {
  return skade::InvalidArgument("property '" + name + "' " + what +
                                ", which FalkorDB cannot store");
}
}  // namespace

namespace {
bool StorablePrimitive(const skade::Type& t) {
  return t.is_primitive() && t.id != skade::TypeId::kBinary && t.id != skade::TypeId::kFixed;
}
}  // namespace

bool IsStorableProperty(const skade::Type& type) {
  return StorablePrimitive(type) ||
         (type.id == skade::TypeId::kList && StorablePrimitive(*type.element().type));
}

bool IsStorableKey(const skade::Type& type) {
  return StorablePrimitive(type) && type.id != skade::TypeId::kFloat &&
         type.id != skade::TypeId::kDouble;
}

skade::Status CheckStorableType(const skade::Type& type, const std::string& name) {
  if (IsStorableProperty(type)) return {};
  return Refuse(name, "has type " + type.ToString());
}

skade::Status CheckStorableDouble(double d, const std::string& name) {
  if (std::isfinite(d)) return {};
  return Refuse(name, std::string("holds ") + (std::isnan(d) ? "NaN" : "an infinity"));
}

skade::Status CheckStorableText(std::string_view s, const std::string& name) {
  if (s.find('\0') == std::string_view::npos) return {};
  return Refuse(name, "holds a string with a NUL byte");
}

skade::Status NullListElement(const std::string& name) {
  return Refuse(name, "holds a list with a null element");
}

}  // namespace bifrost
