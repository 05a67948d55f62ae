// Node tree → Avro schema JSON that fastavro, PyIceberg and Java accept.
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "skade/avro/avro.h"

namespace skade::avro {
namespace {

using ojson = nlohmann::ordered_json;

const char* KindName(NodeKind kind) {
  switch (kind) {
    case NodeKind::kNull:
      return "null";
    case NodeKind::kBoolean:
      return "boolean";
    case NodeKind::kInt:
      return "int";
    case NodeKind::kLong:
      return "long";
    case NodeKind::kFloat:
      return "float";
    case NodeKind::kDouble:
      return "double";
    case NodeKind::kBytes:
      return "bytes";
    case NodeKind::kString:
      return "string";
    case NodeKind::kRecord:
      return "record";
    case NodeKind::kEnum:
      return "enum";
    case NodeKind::kArray:
      return "array";
    case NodeKind::kMap:
      return "map";
    case NodeKind::kUnion:
      return "union";
    case NodeKind::kFixed:
      return "fixed";
  }
  return "null";
}

class SchemaWriter {
 public:
  /// `ns` is the enclosing namespace, which unqualified names inherit.
  ojson Write(const Node& node, const std::string& ns) {
    switch (node.kind) {
      case NodeKind::kUnion: {
        ojson out = ojson::array();
        for (const auto& b : node.branches) out.push_back(Write(*b, ns));
        return out;
      }
      case NodeKind::kRecord:
      case NodeKind::kEnum:
      case NodeKind::kFixed:
        // A named type is defined once; later uses refer to it by full name.
        if (!defined_.insert(node.name).second) return node.name;
        break;
      default:
        break;
    }
    const bool plain =
        node.logical_type.empty() && node.precision == 0 && node.scale == 0 && !node.adjust_to_utc;
    if (node.kind <= NodeKind::kString && plain) return KindName(node.kind);

    ojson out = ojson::object();
    out["type"] = KindName(node.kind);
    switch (node.kind) {
      case NodeKind::kRecord: {
        WriteName(node.name, ns, out);
        ojson fields = ojson::array();
        const std::string inner = NamespaceOf(node.name);
        for (const auto& f : node.fields) fields.push_back(WriteField(f, inner));
        out["fields"] = std::move(fields);
        break;
      }
      case NodeKind::kEnum:
        WriteName(node.name, ns, out);
        out["symbols"] = node.symbols;
        break;
      case NodeKind::kFixed:
        WriteName(node.name, ns, out);
        out["size"] = node.fixed_size;
        break;
      case NodeKind::kArray:
        out["items"] = Write(*node.items, ns);
        if (node.element_id) out["element-id"] = *node.element_id;
        break;
      case NodeKind::kMap:
        out["values"] = Write(*node.items, ns);
        if (node.key_id) out["key-id"] = *node.key_id;
        if (node.value_id) out["value-id"] = *node.value_id;
        break;
      default:
        break;
    }
    if (!node.logical_type.empty()) out["logicalType"] = node.logical_type;
    if (node.logical_type == "decimal" || node.precision != 0) out["precision"] = node.precision;
    if (node.logical_type == "decimal" || node.scale != 0) out["scale"] = node.scale;
    if (node.adjust_to_utc) out["adjust-to-utc"] = *node.adjust_to_utc;
    return out;
  }

 private:
  static std::string NamespaceOf(const std::string& full_name) {
    auto dot = full_name.rfind('.');
    return dot == std::string::npos ? std::string() : full_name.substr(0, dot);
  }

  /// Names are full names; one without a dot inside a namespace needs an explicit empty
  /// namespace, or readers would put it in the enclosing one.
  static void WriteName(const std::string& full_name, const std::string& ns, ojson& out) {
    out["name"] = full_name;
    if (full_name.find('.') == std::string::npos && !ns.empty()) out["namespace"] = "";
  }

  ojson WriteField(const FieldNode& f, const std::string& ns) {
    ojson out = ojson::object();
    out["name"] = f.name;
    out["type"] = Write(*f.type, ns);
    if (f.type->kind == NodeKind::kUnion && !f.type->branches.empty() &&
        f.type->branches[0]->kind == NodeKind::kNull) {
      out["default"] = nullptr;
    }
    if (f.field_id) out["field-id"] = *f.field_id;
    return out;
  }

  std::set<std::string> defined_;
};

}  // namespace

std::string SchemaToJson(const Node& node) {
  SchemaWriter writer;
  // Names and symbols come from parsed JSON or from code; replace rather than throw on
  // invalid UTF-8.
  return writer.Write(node, "").dump(-1, ' ', false,
                                     nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace skade::avro
