// Avro schema JSON → Node tree, keeping Iceberg's id attributes.
#include <charconv>
#include <exception>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "skade/common/nesting.h"
#include "skade/avro/avro.h"
#include "skade/avro/avro_internal.h"

namespace skade::avro {
namespace {

using nlohmann::json;

std::optional<NodeKind> PrimitiveKind(std::string_view name) {
  if (name == "null") return NodeKind::kNull;
  if (name == "boolean") return NodeKind::kBoolean;
  if (name == "int") return NodeKind::kInt;
  if (name == "long") return NodeKind::kLong;
  if (name == "float") return NodeKind::kFloat;
  if (name == "double") return NodeKind::kDouble;
  if (name == "bytes") return NodeKind::kBytes;
  if (name == "string") return NodeKind::kString;
  return std::nullopt;
}

/// An integer attribute written as a JSON number or as a decimal string.
Result<std::optional<int>> IntAttr(const json& obj, const char* key) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return std::nullopt;
  if (it->is_number_unsigned()) {
    const auto v = it->get<uint64_t>();
    if (v > INT32_MAX) return Corrupt(std::string("attribute '") + key + "' out of range");
    return static_cast<int>(v);
  }
  if (it->is_number_integer()) {
    const auto v = it->get<int64_t>();
    if (v < INT32_MIN || v > INT32_MAX) {
      return Corrupt(std::string("attribute '") + key + "' out of range");
    }
    return static_cast<int>(v);
  }
  if (it->is_string()) {
    const auto& s = it->get_ref<const std::string&>();
    int v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec == std::errc() && end == s.data() + s.size() && !s.empty()) return v;
  }
  return Corrupt(std::string("attribute '") + key + "' is not an integer: " + it->dump());
}

Result<std::string> StringAttr(const json& obj, const char* key, bool required) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) {
    if (required) return Corrupt(std::string("schema object lacks '") + key + "'");
    return std::string();
  }
  if (!it->is_string()) return Corrupt(std::string("attribute '") + key + "' is not a string");
  return it->get<std::string>();
}

class SchemaParser {
 public:
  Result<NodePtr> Parse(const json& j, const std::string& ns, int depth) {
    if (depth > internal::kMaxDepth) return Corrupt("schema nested too deeply");
    if (j.is_string()) return ParseName(j.get_ref<const std::string&>(), ns);
    if (j.is_array()) return ParseUnion(j, ns, depth);
    if (j.is_object()) return ParseObject(j, ns, depth);
    return Corrupt("schema is neither a name, an object nor a union: " + j.dump());
  }

 private:
  Result<NodePtr> ParseName(const std::string& name, const std::string& ns) {
    if (auto kind = PrimitiveKind(name)) {
      auto node = std::make_shared<Node>();
      node->kind = *kind;
      return node;
    }
    if (name.find('.') == std::string::npos && !ns.empty()) {
      if (auto it = named_.find(ns + "." + name); it != named_.end()) return it->second;
    }
    if (auto it = named_.find(name); it != named_.end()) return it->second;
    if (in_progress_.contains(name) || in_progress_.contains(ns + "." + name)) {
      return Corrupt("recursive type '" + name + "' is not supported");
    }
    return Corrupt("unknown type name '" + name + "'");
  }

  Result<NodePtr> ParseUnion(const json& j, const std::string& ns, int depth) {
    auto node = std::make_shared<Node>();
    node->kind = NodeKind::kUnion;
    node->branches.reserve(j.size());
    for (const auto& branch : j) {
      SKADE_ASSIGN_OR_RETURN(NodePtr b, Parse(branch, ns, depth + 1));
      if (b->kind == NodeKind::kUnion) return Corrupt("union directly inside a union");
      node->branches.push_back(std::move(b));
    }
    return node;
  }

  /// Full name of a named type per the Avro namespace rules.
  static Result<std::string> FullName(const json& j, const std::string& ns) {
    SKADE_ASSIGN_OR_RETURN(std::string name, StringAttr(j, "name", true));
    if (name.empty()) return Corrupt("named type with an empty name");
    if (name.find('.') != std::string::npos) return name;
    std::string space = ns;
    if (j.contains("namespace")) {
      SKADE_ASSIGN_OR_RETURN(space, StringAttr(j, "namespace", false));
    }
    return space.empty() ? name : space + "." + name;
  }

  static std::string NamespaceOf(const std::string& full_name) {
    auto dot = full_name.rfind('.');
    return dot == std::string::npos ? std::string() : full_name.substr(0, dot);
  }

  Status Register(const std::string& full_name, NodePtr node) {
    if (!named_.emplace(full_name, std::move(node)).second) {
      return Corrupt("type '" + full_name + "' defined twice");
    }
    return {};
  }

  Result<NodePtr> ParseObject(const json& j, const std::string& ns, int depth) {
    auto type_it = j.find("type");
    if (type_it == j.end()) return Corrupt("schema object lacks 'type'");
    if (!type_it->is_string()) {
      return Corrupt("schema 'type' must be a string: " + type_it->dump());
    }
    const auto& type = type_it->get_ref<const std::string&>();
    auto node = std::make_shared<Node>();
    SKADE_ASSIGN_OR_RETURN(node->logical_type, StringAttr(j, "logicalType", false));
    SKADE_ASSIGN_OR_RETURN(auto precision, IntAttr(j, "precision"));
    SKADE_ASSIGN_OR_RETURN(auto scale, IntAttr(j, "scale"));
    node->precision = precision.value_or(0);
    node->scale = scale.value_or(0);
    if (auto it = j.find("adjust-to-utc"); it != j.end() && !it->is_null()) {
      if (it->is_boolean()) {
        node->adjust_to_utc = it->get<bool>();
      } else if (it->is_string() && (*it == "true" || *it == "false")) {
        node->adjust_to_utc = (*it == "true");
      } else {
        return Corrupt("attribute 'adjust-to-utc' is not a boolean");
      }
    }

    if (auto kind = PrimitiveKind(type)) {
      node->kind = *kind;
      return node;
    }
    if (type == "record" || type == "error") return ParseRecord(j, ns, depth, std::move(node));
    if (type == "enum") {
      node->kind = NodeKind::kEnum;
      SKADE_ASSIGN_OR_RETURN(node->name, FullName(j, ns));
      auto it = j.find("symbols");
      if (it == j.end() || !it->is_array()) return Corrupt("enum lacks a 'symbols' array");
      node->symbols.reserve(it->size());
      for (const auto& s : *it) {
        if (!s.is_string()) return Corrupt("enum symbol is not a string");
        node->symbols.push_back(s.get<std::string>());
      }
      SKADE_RETURN_IF_ERROR(Register(node->name, node));
      return node;
    }
    if (type == "fixed") {
      node->kind = NodeKind::kFixed;
      SKADE_ASSIGN_OR_RETURN(node->name, FullName(j, ns));
      SKADE_ASSIGN_OR_RETURN(auto size, IntAttr(j, "size"));
      if (!size || *size < 0) return Corrupt("fixed '" + node->name + "' lacks a valid 'size'");
      node->fixed_size = *size;
      SKADE_RETURN_IF_ERROR(Register(node->name, node));
      return node;
    }
    if (type == "array") {
      node->kind = NodeKind::kArray;
      auto it = j.find("items");
      if (it == j.end()) return Corrupt("array lacks 'items'");
      SKADE_ASSIGN_OR_RETURN(node->items, Parse(*it, ns, depth + 1));
      SKADE_ASSIGN_OR_RETURN(node->element_id, IntAttr(j, "element-id"));
      return node;
    }
    if (type == "map") {
      node->kind = NodeKind::kMap;
      auto it = j.find("values");
      if (it == j.end()) return Corrupt("map lacks 'values'");
      SKADE_ASSIGN_OR_RETURN(node->items, Parse(*it, ns, depth + 1));
      SKADE_ASSIGN_OR_RETURN(node->key_id, IntAttr(j, "key-id"));
      SKADE_ASSIGN_OR_RETURN(node->value_id, IntAttr(j, "value-id"));
      return node;
    }
    // {"type": "SomeNamedType"}: a reference written as an object.
    return ParseName(type, ns);
  }

  Result<NodePtr> ParseRecord(const json& j, const std::string& ns, int depth,
                              std::shared_ptr<Node> node) {
    node->kind = NodeKind::kRecord;
    SKADE_ASSIGN_OR_RETURN(node->name, FullName(j, ns));
    auto fields = j.find("fields");
    if (fields == j.end() || !fields->is_array()) {
      return Corrupt("record '" + node->name + "' lacks a 'fields' array");
    }
    in_progress_.insert(node->name);
    const std::string inner_ns = NamespaceOf(node->name);
    std::set<std::string> seen;
    node->fields.reserve(fields->size());
    for (const auto& f : *fields) {
      if (!f.is_object()) return Corrupt("record '" + node->name + "' has a non-object field");
      FieldNode field;
      SKADE_ASSIGN_OR_RETURN(field.name, StringAttr(f, "name", true));
      if (!seen.insert(field.name).second) {
        return Corrupt("record '" + node->name + "' repeats field '" + field.name + "'");
      }
      auto type = f.find("type");
      if (type == f.end()) return Corrupt("field '" + field.name + "' lacks 'type'");
      auto parsed = Parse(*type, inner_ns, depth + 1);
      if (!parsed) return std::unexpected(parsed.error().WithContext("field '" + field.name + "'"));
      field.type = std::move(*parsed);
      SKADE_ASSIGN_OR_RETURN(field.field_id, IntAttr(f, "field-id"));
      node->fields.push_back(std::move(field));
    }
    in_progress_.erase(node->name);
    SKADE_RETURN_IF_ERROR(Register(node->name, node));
    return node;
  }

  std::map<std::string, NodePtr> named_;
  std::set<std::string> in_progress_;
};

}  // namespace

int Node::FieldIndex(std::string_view field_name) const {
  for (size_t i = 0; i < fields.size(); ++i) {
    if (fields[i].name == field_name) return static_cast<int>(i);
  }
  return -1;
}

int Node::FieldIndexById(int id) const {
  for (size_t i = 0; i < fields.size(); ++i) {
    if (fields[i].field_id == id) return static_cast<int>(i);
  }
  return -1;
}

namespace {

// Parsed schemas by their JSON text. Every manifest of a table carries the same writer
// schema in its header, and parsing it was most of a plan's work on tables of many
// manifests (300 one-file manifests: 45% of `skade scan --limit 0`). Nodes are
// immutable, so one parse serves every reader. The cache is cleared when full, and a
// text larger than a manifest's schema ever is passes by it, so a long-running server
// (or a warehouse with hostile headers) holds a few MiB at most.
class SchemaCache {
 public:
  NodePtr Find(std::string_view text) {
    if (text.size() > kLargestCached) return nullptr;
    std::lock_guard lock(mu_);
    auto it = parsed_.find(text);
    return it == parsed_.end() ? nullptr : it->second;
  }
  void Add(std::string_view text, NodePtr node) {
    if (text.size() > kLargestCached) return;
    std::lock_guard lock(mu_);
    if (parsed_.size() >= kCachedSchemas) parsed_.clear();
    parsed_.emplace(std::string(text), std::move(node));
  }

 private:
  static constexpr size_t kCachedSchemas = 64;
  static constexpr size_t kLargestCached = 256 << 10;  // a wide table's manifest schema is tens of KiB
  std::mutex mu_;
  std::map<std::string, NodePtr, std::less<>> parsed_;
};

SchemaCache& Cache() {
  static SchemaCache cache;
  return cache;
}

Result<NodePtr> ParseSchemaText(std::string_view text) {
  if (auto st = CheckJsonNesting(text, "Avro schema"); !st) return Corrupt(st.error().message);
  try {
    json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) return Corrupt("Avro schema is not valid JSON");
    SchemaParser parser;
    auto result = parser.Parse(j, "", 0);
    if (!result) return std::unexpected(result.error().WithContext("Avro schema"));
    return result;
  } catch (const std::exception& e) {
    return Corrupt(std::string("Avro schema: ") + e.what());
  }
}

}  // namespace

Result<NodePtr> ParseSchema(std::string_view text) {
  if (NodePtr cached = Cache().Find(text)) return cached;
  SKADE_ASSIGN_OR_RETURN(NodePtr node, ParseSchemaText(text));
  Cache().Add(text, node);
  return node;
}

}  // namespace skade::avro
