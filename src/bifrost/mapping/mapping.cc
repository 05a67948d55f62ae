#include "bifrost/mapping/mapping.h"

#include <yaml-cpp/yaml.h>

#include <fstream>
#include <set>
#include <sstream>

namespace bifrost {

std::string_view SyncModeName(SyncMode mode) {
  switch (mode) {
    case SyncMode::kFull:
      return "full";
    case SyncMode::kIncremental:
      return "incremental";
    case SyncMode::kCdc:
      return "cdc";
  }
  return "?";
}

namespace {

// Collects every problem of a file so the user fixes them in one go.
class Problems {
 public:
  explicit Problems(std::string origin) : origin_(std::move(origin)) {}
  void Add(const YAML::Node& at, const std::string& what) {
    int line = at.IsDefined() ? at.Mark().line + 1 : 0;
    lines_.push_back(origin_ + (line > 0 ? ":" + std::to_string(line) : "") + ": " + what);
  }
  bool empty() const { return lines_.empty(); }
  std::string Join() const {
    std::string out;
    for (const auto& l : lines_) out += (out.empty() ? "" : "\n") + l;
    return out;
  }

 private:
  std::string origin_;
  std::vector<std::string> lines_;
};

void CheckKeys(const YAML::Node& node, const std::set<std::string>& allowed,
               const std::string& where, Problems& problems) {
  for (const auto& kv : node) {
    auto key = kv.first.as<std::string>();
    if (allowed.contains(key)) continue;
    std::string list;
    for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
    problems.Add(kv.first, "unknown key '" + key + "' in " + where + " (allowed: " + list + ")");
  }
}

std::string Scalar(const YAML::Node& node, const std::string& key, const std::string& where,
                   Problems& problems, bool required) {
  const YAML::Node v = node[key];
  if (!v.IsDefined() || v.IsNull()) {
    if (required) problems.Add(node, where + " needs '" + key + "'");
    return {};
  }
  if (!v.IsScalar()) {
    problems.Add(v, "'" + key + "' in " + where + " must be a single value");
    return {};
  }
  auto s = v.as<std::string>();
  if (required && s.empty()) problems.Add(v, "'" + key + "' in " + where + " must not be empty");
  return s;
}

std::vector<std::string> List(const YAML::Node& node, const std::string& key,
                              const std::string& where, Problems& problems) {
  std::vector<std::string> out;
  const YAML::Node v = node[key];
  if (!v.IsDefined() || v.IsNull()) return out;
  if (v.IsScalar()) return {v.as<std::string>()};
  if (!v.IsSequence()) {
    problems.Add(v, "'" + key + "' in " + where + " must be a list of column names");
    return out;
  }
  for (const auto& item : v) {
    if (!item.IsScalar()) {
      problems.Add(item, "'" + key + "' in " + where + " must hold plain names");
      continue;
    }
    out.push_back(item.as<std::string>());
  }
  return out;
}

// `id_column: x` or `id_columns: [x, y]` (either spelling, not both).
std::vector<std::string> OneOrMany(const YAML::Node& node, const std::string& one,
                                   const std::string& many, const std::string& where,
                                   Problems& problems, bool required) {
  bool has_one = node[one].IsDefined(), has_many = node[many].IsDefined();
  if (has_one && has_many) problems.Add(node, where + " has both '" + one + "' and '" + many + "'");
  auto out = has_one ? List(node, one, where, problems) : List(node, many, where, problems);
  if (required && out.empty()) problems.Add(node, where + " needs '" + one + "' or '" + many + "'");
  return out;
}

std::map<std::string, std::string> Rename(const YAML::Node& node, const std::string& where,
                                          Problems& problems) {
  std::map<std::string, std::string> out;
  const YAML::Node v = node["rename"];
  if (!v.IsDefined() || v.IsNull()) return out;
  if (!v.IsMap()) {
    problems.Add(v, "'rename' in " + where + " must map column names to property names");
    return out;
  }
  for (const auto& kv : v) out[kv.first.as<std::string>()] = kv.second.as<std::string>();
  return out;
}

EndpointSpec Endpoint(const YAML::Node& step, const std::string& key, const std::string& where,
                      Problems& problems) {
  EndpointSpec ep;
  const YAML::Node v = step[key];
  std::string here = "'" + key + "' of " + where;
  if (!v.IsDefined() || !v.IsMap()) {
    problems.Add(v.IsDefined() ? v : step, where + " needs '" + key + ": {column, label}'");
    return ep;
  }
  CheckKeys(v, {"column", "columns", "label", "key", "keys"}, here, problems);
  ep.label = Scalar(v, "label", here, problems, true);
  ep.columns = OneOrMany(v, "column", "columns", here, problems, true);
  ep.keys = OneOrMany(v, "key", "keys", here, problems, false);
  return ep;
}

Result<PipelineStep> ParseStep(const YAML::Node& item, const std::string& where,
                               Problems& problems) {
  if (!item.IsMap() || item.size() != 1) {
    problems.Add(item,
                 where + " must be one of 'vertex', 'edge', 'fk_edges', 'custom' with its fields");
    return skade::InvalidArgument("bad step");
  }
  auto kind = item.begin()->first.as<std::string>();
  const YAML::Node body = item.begin()->second;
  std::string here = "'" + kind + "' step of " + where;
  if (!body.IsMap()) {
    problems.Add(body, here + " must be a map of fields");
    return skade::InvalidArgument("bad step");
  }
  if (kind == "vertex") {
    CheckKeys(body, {"label", "id_column", "id_columns", "properties", "rename"}, here, problems);
    VertexStep v;
    v.label = Scalar(body, "label", here, problems, true);
    v.id_columns = OneOrMany(body, "id_column", "id_columns", here, problems, true);
    v.properties = List(body, "properties", here, problems);
    v.rename = Rename(body, here, problems);
    return v;
  }
  if (kind == "edge" || kind == "fk_edges") {
    CheckKeys(body, {"type", "src", "dst", "key_column", "key_columns", "properties", "rename"},
              here, problems);
    EdgeStep e;
    e.fk = kind == "fk_edges";
    e.type = Scalar(body, "type", here, problems, true);
    e.src = Endpoint(body, "src", here, problems);
    e.dst = Endpoint(body, "dst", here, problems);
    e.key_columns = OneOrMany(body, "key_column", "key_columns", here, problems, false);
    e.properties = List(body, "properties", here, problems);
    e.rename = Rename(body, here, problems);
    return e;
  }
  if (kind == "custom") {
    CheckKeys(body, {"name"}, here, problems);
    return CustomStep{Scalar(body, "name", here, problems, true)};
  }
  problems.Add(item.begin()->first, "unknown step '" + kind + "' in " + where +
                                        " (steps: vertex, edge, fk_edges, custom)");
  return skade::InvalidArgument("bad step");
}

bool Bool(const YAML::Node& node, const std::string& key, const std::string& where,
                  Problems& problems) {
  const YAML::Node v = node[key];
  if (!v.IsDefined()) return false;
  bool out = false;
  if (!v.IsScalar() || !YAML::convert<bool>::decode(v, out))
    problems.Add(v, "'" + key + "' in " + where + " must be true or false");
  return out;
}

MappingSpec ParseRoot(const YAML::Node& root, Problems& problems) {
  MappingSpec spec;
  if (!root.IsMap()) {
    problems.Add(root, "a mapping file is a map with 'graph' and 'tables'");
    return spec;
  }
  CheckKeys(root, {"graph", "tables"}, "the mapping", problems);
  spec.graph = Scalar(root, "graph", "the mapping", problems, true);
  const YAML::Node tables = root["tables"];
  if (!tables.IsDefined() || !tables.IsSequence() || tables.size() == 0) {
    problems.Add(tables.IsDefined() ? tables : root,
                 "the mapping needs 'tables:' with at least one entry");
    return spec;
  }
  for (size_t i = 0; i < tables.size(); ++i) {
    const YAML::Node t = tables[i];
    std::string where = "tables[" + std::to_string(i) + "]";
    if (!t.IsMap()) {
      problems.Add(t, where + " must be a map with 'table', 'mode' and 'pipeline'");
      continue;
    }
    CheckKeys(t,
              {"table", "source", "mode", "columns", "filter", "pipeline", "allow_empty", "prune"},
              where, problems);
    TableMapping tm;
    tm.line = t.Mark().line + 1;
    tm.table = Scalar(t, "table", where, problems, true);
    if (!tm.table.empty()) where = "table '" + tm.table + "'";
    tm.source = Scalar(t, "source", where, problems, false);
    if (!tm.source.empty() && !tm.source.starts_with("parquet:"))
      problems.Add(t["source"], "source '" + tm.source + "' of " + where +
                                    " is not parquet:DIR (omit it for the warehouse)");
    std::string mode = Scalar(t, "mode", where, problems, false);
    if (mode.empty() || mode == "full")
      tm.mode = SyncMode::kFull;
    else if (mode == "incremental")
      tm.mode = SyncMode::kIncremental;
    else if (mode == "cdc")
      tm.mode = SyncMode::kCdc;
    else
      problems.Add(t["mode"],
                   "mode '" + mode + "' of " + where + " is not one of full, incremental, cdc");
    tm.columns = List(t, "columns", where, problems);
    tm.filter = Scalar(t, "filter", where, problems, false);
    tm.allow_empty = Bool(t, "allow_empty", where, problems);
    tm.prune = Bool(t, "prune", where, problems);
    if (tm.prune && tm.mode != SyncMode::kFull)
      problems.Add(t["prune"], "'prune' in " + where + " needs mode full");
    const YAML::Node pipeline = t["pipeline"];
    if (!pipeline.IsDefined() || !pipeline.IsSequence() || pipeline.size() == 0) {
      problems.Add(pipeline.IsDefined() ? pipeline : t,
                   where + " needs a 'pipeline' with at least one step");
      continue;
    }
    for (size_t s = 0; s < pipeline.size(); ++s) {
      auto step = ParseStep(pipeline[s], where + " pipeline[" + std::to_string(s) + "]", problems);
      if (step) tm.pipeline.push_back(std::move(*step));
    }
    spec.tables.push_back(std::move(tm));
  }
  return spec;
}

void EmitList(YAML::Emitter& out, const char* key, const std::vector<std::string>& items) {
  if (items.empty()) return;
  out << YAML::Key << key << YAML::Value << YAML::Flow << items;
}

void EmitEndpoint(YAML::Emitter& out, const char* key, const EndpointSpec& ep) {
  out << YAML::Key << key << YAML::Value << YAML::Flow << YAML::BeginMap;
  out << YAML::Key << "label" << YAML::Value << ep.label;
  if (ep.columns.size() == 1)
    out << YAML::Key << "column" << YAML::Value << ep.columns[0];
  else
    EmitList(out, "columns", ep.columns);
  EmitList(out, "keys", ep.keys);
  out << YAML::EndMap;
}

}  // namespace

Result<MappingSpec> MappingSpec::Parse(const std::string& text, const std::string& origin) {
  Problems problems(origin);
  MappingSpec spec;
  try {
    spec = ParseRoot(YAML::Load(text), problems);
  } catch (const YAML::Exception& e) {
    // yaml-cpp's marks are 0-based.
    return skade::InvalidArgument(origin + ":" + std::to_string(e.mark.line + 1) +
                                  ": not valid YAML: " + e.msg);
  }
  if (!problems.empty()) return skade::InvalidArgument(problems.Join());
  return spec;
}

Result<MappingSpec> MappingSpec::Load(const std::string& path) {
  std::ifstream in(path);
  if (!in) return skade::NotFound("mapping file '" + path + "' cannot be read");
  std::stringstream ss;
  ss << in.rdbuf();
  return Parse(ss.str(), path);
}

std::string MappingSpec::ToYaml() const {
  YAML::Emitter out;
  out << YAML::BeginMap << YAML::Key << "graph" << YAML::Value << graph;
  out << YAML::Key << "tables" << YAML::Value << YAML::BeginSeq;
  for (const auto& t : tables) {
    out << YAML::BeginMap << YAML::Key << "table" << YAML::Value << t.table;
    if (!t.source.empty()) out << YAML::Key << "source" << YAML::Value << t.source;
    out << YAML::Key << "mode" << YAML::Value << std::string(SyncModeName(t.mode));
    EmitList(out, "columns", t.columns);
    if (!t.filter.empty()) out << YAML::Key << "filter" << YAML::Value << t.filter;
    if (t.allow_empty) out << YAML::Key << "allow_empty" << YAML::Value << true;
    if (t.prune) out << YAML::Key << "prune" << YAML::Value << true;
    out << YAML::Key << "pipeline" << YAML::Value << YAML::BeginSeq;
    for (const auto& step : t.pipeline) {
      out << YAML::BeginMap;
      if (const auto* v = std::get_if<VertexStep>(&step)) {
        out << YAML::Key << "vertex" << YAML::Value << YAML::BeginMap;
        out << YAML::Key << "label" << YAML::Value << v->label;
        if (v->id_columns.size() == 1)
          out << YAML::Key << "id_column" << YAML::Value << v->id_columns[0];
        else
          EmitList(out, "id_columns", v->id_columns);
        EmitList(out, "properties", v->properties);
        if (!v->rename.empty())
          out << YAML::Key << "rename" << YAML::Value << YAML::Flow << v->rename;
        out << YAML::EndMap;
      } else if (const auto* e = std::get_if<EdgeStep>(&step)) {
        out << YAML::Key << (e->fk ? "fk_edges" : "edge") << YAML::Value << YAML::BeginMap;
        out << YAML::Key << "type" << YAML::Value << e->type;
        EmitEndpoint(out, "src", e->src);
        EmitEndpoint(out, "dst", e->dst);
        EmitList(out, "key_columns", e->key_columns);
        EmitList(out, "properties", e->properties);
        if (!e->rename.empty())
          out << YAML::Key << "rename" << YAML::Value << YAML::Flow << e->rename;
        out << YAML::EndMap;
      } else {
        out << YAML::Key << "custom" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key
            << "name" << YAML::Value << std::get<CustomStep>(step).name << YAML::EndMap;
      }
      out << YAML::EndMap;
    }
    out << YAML::EndSeq << YAML::EndMap;
  }
  out << YAML::EndSeq << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

}  // namespace bifrost
