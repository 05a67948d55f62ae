#include "bifrost/sink/property_values.h"

#include <cmath>

namespace bifrost {

namespace {
skade::Status Refuse(const std::string& name, const std::string& what) {
  return skade::InvalidArgument("property '" + name + "' " + what +
                                ", which FalkorDB cannot store");
}
}  // namespace

skade::Status CheckStorableType(const skade::Type& type, const std::string& name) {
  switch (type.id) {
    case skade::TypeId::kBinary:
    case skade::TypeId::kFixed:
    case skade::TypeId::kStruct:
    case skade::TypeId::kMap:
      return Refuse(name, "has type " + type.ToString());
    case skade::TypeId::kList: {
      const skade::Type& element = *type.element().type;
      if (element.id == skade::TypeId::kList) return Refuse(name, "has type " + type.ToString());
      return CheckStorableType(element, name);
    }
    default:
      return {};
  }
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
