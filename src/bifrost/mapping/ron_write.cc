// The RON writer: what `bifrost convert --to ron` and `infer --format ron` print.
#include "bifrost/mapping/ron.h"

namespace bifrost::ron {
namespace {

// The RON writer: one field per line where it helps reading, strings escaped RON's way.
class Writer {
 public:
  std::string Run(const MappingSpec& spec) {
    out_ += "(\n    graph: " + Str(spec.graph) + ",\n    tables: [\n";
    for (const auto& t : spec.tables) {
      out_ += "        (\n";
      Field(3, "table", Str(t.table));
      if (!t.source.empty()) Field(3, "source", Str(t.source));
      if (!t.token_file.empty()) Field(3, "token_file", Str(t.token_file));
      std::string mode(SyncModeName(t.mode));
      mode[0] = static_cast<char>(mode[0] - 'a' + 'A');
      Field(3, "mode", mode);
      if (!t.columns.empty()) Field(3, "columns", List(t.columns));
      if (!t.filter.empty()) Field(3, "filter", Str(t.filter));
      if (t.allow_empty) Field(3, "allow_empty", "true");
      if (t.prune) Field(3, "prune", "true");
      out_ += "            pipeline: [\n";
      for (const auto& step : t.pipeline) out_ += "                " + Step(step) + ",\n";
      out_ += "            ],\n        ),\n";
    }
    out_ += "    ],\n)\n";
    return out_;
  }

 private:
  void Field(int indent, const char* name, const std::string& value) {
    out_ += std::string(indent * 4, ' ') + name + ": " + value + ",\n";
  }
  static std::string Str(std::string_view s) {
    std::string out = "\"";
    for (unsigned char c : s) {
      if (c == '"' || c == '\\') {
        out += '\\';
        out += static_cast<char>(c);
      } else if (c == '\n') {
        out += "\\n";
      } else if (c == '\t') {
        out += "\\t";
      } else if (c == '\r') {
        out += "\\r";
      } else if (c < 0x20 || c == 0x7f) {
        static const char* kHex = "0123456789abcdef";
        out += "\\u{";
        out += kHex[c >> 4];
        out += kHex[c & 15];
        out += "}";
      } else {
        out += static_cast<char>(c);
      }
    }
    return out + "\"";
  }
  static std::string List(const std::vector<std::string>& items) {
    std::string out = "[";
    for (size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + Str(items[i]);
    return out + "]";
  }
  static std::string Names(const char* one, const char* many, const std::vector<std::string>& items) {
    if (items.size() == 1) return std::string(one) + ": " + Str(items[0]);
    return std::string(many) + ": " + List(items);
  }
  static std::string Map(const std::map<std::string, std::string>& entries) {
    std::string out = "{";
    bool first = true;
    for (const auto& [k, v] : entries) {
      out += (first ? "" : ", ") + Str(k) + ": " + Str(v);
      first = false;
    }
    return out + "}";
  }
  static std::string Rename(const std::map<std::string, std::string>& rename) {
    return "rename: " + Map(rename);
  }
  // An out-of-process step carries its runner's settings, columns, reply schema and output steps.
  static void CustomParts(const CustomStep& c, std::vector<std::string>& parts) {
    parts.push_back("name: " + Str(c.name));
    if (c.runner.empty()) return;
    parts.push_back(c.runner + ": " + Map(c.settings));
    if (!c.columns.empty()) parts.push_back("columns: " + List(c.columns));
    parts.push_back("schema: " + Str(c.schema));
    std::string output = "output: [";
    bool first = true;
    auto add = [&](const PipelineStep& s) {
      output += (first ? "" : ", ") + Step(s);
      first = false;
    };
    for (const auto& v : c.output_vertices) add(v);
    for (const auto& e : c.output_edges) add(e);
    parts.push_back(output + "]");
  }
  static std::string Endpoint(const EndpointSpec& ep) {
    std::string out = "(label: " + Str(ep.label) + ", " + Names("column", "columns", ep.columns);
    if (!ep.keys.empty()) out += ", keys: " + List(ep.keys);
    return out + ")";
  }
  static std::string Step(const PipelineStep& step) {
    std::vector<std::string> parts;
    std::string kind;
    if (const auto* v = std::get_if<VertexStep>(&step)) {
      kind = "Vertex";
      parts.push_back("label: " + Str(v->label));
      parts.push_back(Names("id_column", "id_columns", v->id_columns));
      if (!v->properties.empty()) parts.push_back("properties: " + List(v->properties));
      if (!v->rename.empty()) parts.push_back(Rename(v->rename));
    } else if (const auto* e = std::get_if<EdgeStep>(&step)) {
      kind = e->fk ? "FkEdges" : "Edge";
      parts.push_back("type: " + Str(e->type));
      parts.push_back("src: " + Endpoint(e->src));
      parts.push_back("dst: " + Endpoint(e->dst));
      if (!e->key_columns.empty()) parts.push_back("key_columns: " + List(e->key_columns));
      if (!e->properties.empty()) parts.push_back("properties: " + List(e->properties));
      if (!e->rename.empty()) parts.push_back(Rename(e->rename));
    } else {
      kind = "Custom";
      CustomParts(std::get<CustomStep>(step), parts);
    }
    std::string out = kind + "(";
    for (size_t i = 0; i < parts.size(); ++i) out += (i ? ", " : "") + parts[i];
    return out + ")";
  }
  std::string out_;
};

}  // namespace

std::string Write(const MappingSpec& spec) { return Writer().Run(spec); }

}  // namespace bifrost::ron
