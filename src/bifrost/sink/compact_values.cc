#include <cstdlib>

#include "bifrost/sink/compact_values_internal.h"

namespace bifrost {
namespace {

using Json = nlohmann::ordered_json;

// The value tags of FalkorDB's compact format (stable; new ones are only appended).
enum ValueType : int64_t {
  kNull = 1,
  kString = 2,
  kInteger = 3,
  kBoolean = 4,
  kDouble = 5,
  kArray = 6,
  kEdge = 7,
  kNode = 8,
  kPath = 9,
  kMap = 10,
  kPoint = 11,
  kVectorF32 = 12,
};

std::string Name(const std::vector<std::string>& names, const Reply& id) {
  if (id.integer >= 0 && static_cast<size_t>(id.integer) < names.size())
    return names[static_cast<size_t>(id.integer)];
  return "#" + std::to_string(id.integer);
}

double Double(const Reply& v) {
  return v.kind == Reply::Kind::kInteger ? static_cast<double>(v.integer)
                                         : std::strtod(v.text.c_str(), nullptr);
}

Json Decode(int64_t type, const Reply& v, const GraphNames& names);

// [[key_id, type, value], ...]
Json Properties(const Reply& props, const GraphNames& names) {
  Json out = Json::object();
  for (const auto& p : props.elements)
    if (p.elements.size() == 3)
      out[Name(names.keys, p.elements[0])] = Decode(p.elements[1].integer, p.elements[2], names);
  return out;
}

// [id, [label_id...], properties]
Json Node(const Reply& v, const GraphNames& names) {
  if (v.elements.size() != 3) return nullptr;
  Json labels = Json::array();
  for (const auto& l : v.elements[1].elements) labels.push_back(Name(names.labels, l));
  return Json{{"id", v.elements[0].integer},
              {"labels", std::move(labels)},
              {"properties", Properties(v.elements[2], names)}};
}

// [id, type_id, src_id, dst_id, properties]
Json Edge(const Reply& v, const GraphNames& names) {
  if (v.elements.size() != 5) return nullptr;
  return Json{{"id", v.elements[0].integer},
              {"type", Name(names.types, v.elements[1])},
              {"src", v.elements[2].integer},
              {"dst", v.elements[3].integer},
              {"properties", Properties(v.elements[4], names)}};
}

Json Decode(int64_t type, const Reply& v, const GraphNames& names) {
  switch (type) {
    case kNull:
      return nullptr;
    case kString:
      return v.text;
    case kInteger:
      return v.integer;
    case kBoolean:
      return v.text == "true";
    case kDouble:
      return Double(v);
    case kArray: {
      Json arr = Json::array();
      for (const auto& e : v.elements) arr.push_back(DecodeCell(e, names));
      return arr;
    }
    case kEdge:
      return Edge(v, names);
    case kNode:
      return Node(v, names);
    case kPath:  // [[ARRAY, nodes], [ARRAY, edges]]
      if (v.elements.size() != 2) return nullptr;
      return Json{{"nodes", DecodeCell(v.elements[0], names)},
                  {"edges", DecodeCell(v.elements[1], names)}};
    case kMap: {
      Json obj = Json::object();
      for (size_t i = 0; i + 1 < v.elements.size(); i += 2)
        obj[v.elements[i].text] = DecodeCell(v.elements[i + 1], names);
      return obj;
    }
    case kPoint:
      if (v.elements.size() != 2) return nullptr;
      return Json{{"latitude", Double(v.elements[0])}, {"longitude", Double(v.elements[1])}};
    case kVectorF32: {
      Json arr = Json::array();
      for (const auto& e : v.elements) arr.push_back(Double(e));
      return arr;
    }
    default:  // temporal values are integers; a tag newer than this code keeps its raw form
      if (v.kind == Reply::Kind::kInteger) return v.integer;
      if (v.kind == Reply::Kind::kString) return v.text;
      return nullptr;
  }
}

bool Holds(const Reply& cell) {
  if (cell.elements.size() != 2) return false;
  int64_t type = cell.elements[0].integer;
  if (type == kNode || type == kEdge || type == kPath) return true;
  const Reply& v = cell.elements[1];
  if (type == kArray)
    for (const auto& e : v.elements)
      if (Holds(e)) return true;
  if (type == kMap)
    for (size_t i = 1; i < v.elements.size(); i += 2)
      if (Holds(v.elements[i])) return true;
  return false;
}

}  // namespace

bool HoldsEntities(const Reply& rows) {
  for (const auto& row : rows.elements)
    for (const auto& cell : row.elements)
      if (Holds(cell)) return true;
  return false;
}

nlohmann::ordered_json DecodeCell(const Reply& cell, const GraphNames& names) {
  if (cell.elements.size() != 2) return nullptr;
  return Decode(cell.elements[0].integer, cell.elements[1], names);
}

}  // namespace bifrost
