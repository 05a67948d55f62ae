#include "bifrost/mapping/mapping.h"

#include "bifrost/mapping/ron.h"

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/yaml.h>

#include <fstream>
#include <optional>
#include <string_view>
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
    CheckKeys(body, {"name", "flight", "wasm", "columns", "schema", "output"}, here, problems);
    CustomStep c;
    c.name = Scalar(body, "name", here, problems, true);
    for (const char* runner : {"flight", "wasm"}) {
      const YAML::Node r = body[runner];
      if (!r.IsDefined()) continue;
      if (!c.runner.empty()) problems.Add(r, here + " has both 'flight' and 'wasm'");
      c.runner = runner;
      if (!r.IsMap()) {
        problems.Add(r, "'" + std::string(runner) + "' in " + here + " must be a map of settings");
        continue;
      }
      for (const auto& kv : r) {
        if (!kv.second.IsScalar())
          problems.Add(kv.second, "setting '" + kv.first.as<std::string>() + "' in " + here +
                                      " must be a single value");
        else
          c.settings[kv.first.as<std::string>()] = kv.second.as<std::string>();
      }
    }
    c.columns = List(body, "columns", here, problems);
    c.schema = Scalar(body, "schema", here, problems, !c.runner.empty());
    const YAML::Node output = body["output"];
    if (c.runner.empty()) {
      if (output.IsDefined() || !c.schema.empty() || !c.columns.empty())
        problems.Add(body, here + " takes 'columns', 'schema' and 'output' only with 'flight' or 'wasm'");
      return c;
    }
    if (!output.IsDefined() || !output.IsSequence() || output.size() == 0) {
      problems.Add(output.IsDefined() ? output : body,
                   here + " needs an 'output' list of vertex, edge or fk_edges steps");
      return c;
    }
    for (size_t i = 0; i < output.size(); ++i) {
      auto step = ParseStep(output[i], here + " output[" + std::to_string(i) + "]", problems);
      if (!step) continue;
      if (auto* v = std::get_if<VertexStep>(&*step))
        c.output_vertices.push_back(std::move(*v));
      else if (auto* e = std::get_if<EdgeStep>(&*step))
        c.output_edges.push_back(std::move(*e));
      else
        problems.Add(output[i], "output[" + std::to_string(i) + "] of " + here +
                                    " is a custom step; it must be vertex, edge or fk_edges");
    }
    return c;
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

bool IsRestSource(const std::string& source) {
  return source.starts_with("rest:http://") || source.starts_with("rest:https://");
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
              {"table", "source", "token_file", "mode", "columns", "filter", "pipeline",
               "allow_empty", "prune"},
              where, problems);
    TableMapping tm;
    tm.line = t.Mark().line + 1;
    tm.table = Scalar(t, "table", where, problems, true);
    if (!tm.table.empty()) where = "table '" + tm.table + "'";
    tm.source = Scalar(t, "source", where, problems, false);
    if (!tm.source.empty() && !tm.source.starts_with("parquet:") && !IsRestSource(tm.source) &&
        !tm.source.starts_with("spark:"))
      problems.Add(t["source"], "source '" + tm.source + "' of " + where +
                                    " is not parquet:DIR or rest:http://HOST:PORT[?warehouse=W] "
                                    "or spark:sc://HOST:PORT "
                                    "(omit it for the warehouse)");
    tm.token_file = Scalar(t, "token_file", where, problems, false);
    if (!tm.token_file.empty() && !IsRestSource(tm.source))
      problems.Add(t["token_file"], "'token_file' in " + where + " needs a rest: source");
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

// Whether a node may start at `at`, so a quote or bracket there opens a quoted scalar or
// a flow collection (not `it's` or `a [b` inside a plain scalar): after the indentation
// or an indicator (`- `, `? `, `key: `), or inside brackets after a separator.
bool NodeStartsAt(std::string_view line, size_t at, bool in_flow) {
  size_t p = at;
  while (p > 0 && (line[p - 1] == ' ' || line[p - 1] == '\t')) --p;
  if (p == 0) return true;
  char before = line[p - 1];
  if (in_flow) return std::string_view("[{,:?").find(before) != std::string_view::npos;
  return (before == ':' || before == '-' || before == '?') && p < at;
}

// Scans a quoted scalar (its quote in `quote`) from `from`: the position of the closing
// quote, clearing `quote`, or the line's end when the scalar goes on to the next line.
size_t SkipQuoted(std::string_view line, size_t from, char& quote) {
  for (size_t p = from; p < line.size(); ++p) {
    if (quote == '"' && line[p] == '\\') {
      ++p;
    } else if (line[p] == quote) {
      if (quote == '\'' && p + 1 < line.size() && line[p + 1] == '\'') {
        ++p;  // '' is a quote inside '...'
        continue;
      }
      quote = 0;
      return p;
    }
  }
  return line.size();
}

// Whether a block line from `at` holds a mapping key (`key:` then a space or the end).
bool HasMappingKey(std::string_view line, size_t at) {
  char quote = 0;
  for (size_t p = at; p < line.size(); ++p) {
    char c = line[p];
    if ((c == '\'' || c == '"') && NodeStartsAt(line, p, false)) {
      quote = c;
      p = SkipQuoted(line, p + 1, quote);
      if (quote) return false;
    } else if (c == '#' && p > 0 && (line[p - 1] == ' ' || line[p - 1] == '\t')) {
      return false;
    } else if (c == ':' && (p + 1 == line.size() || line[p + 1] == ' ')) {
      return true;
    }
  }
  return false;
}

// Whether a block line ends by announcing a literal or folded block scalar (`|`, `>-`).
bool OpensBlockScalar(std::string_view line) {
  std::string_view body = line.substr(0, line.find(" #"));
  while (!body.empty() && (body.back() == ' ' || body.back() == '\t')) body.remove_suffix(1);
  auto space = body.find_last_of(" \t");
  std::string_view token = space == std::string_view::npos ? body : body.substr(space + 1);
  return !token.empty() && (token[0] == '|' || token[0] == '>') &&
         token.find_first_not_of("0123456789+-", 1) == std::string_view::npos;
}

// The first line (1-based) where collections nest deeper than `limit`, found on the raw
// text because yaml-cpp recurses once per level. Each flow bracket counts one level,
// and so does each block sequence or map; the top-level collection is level 1.
std::optional<int> LineNestedDeeperThan(std::string_view text, int limit) {
  struct Open {
    size_t col;
    bool seq;
  };
  std::vector<Open> block;               // the block collections open at this line
  int flow = 0;
  char quote = 0;                        // a quoted scalar continues on the next line
  constexpr size_t kNone = std::string_view::npos;
  size_t scalar_parent = kNone;          // inside a block scalar below this column
  std::optional<size_t> open_key;        // a key at this column awaits its value
  // A collection of the kind starts at `col`, or continues when one is open there.
  auto enter = [&](size_t col, bool seq) {
    while (!block.empty() && block.back().col > col) block.pop_back();
    // `key:` then `- item` at the key's own column: the sequence is the key's value.
    if (!block.empty() && block.back().col == col && block.back().seq != seq &&
        !(seq && open_key == col))
      block.pop_back();
    if (block.empty() || block.back().col != col || block.back().seq != seq)
      block.push_back({col, seq});
  };
  int line_no = 0;
  for (size_t start = 0; start <= text.size(); ++line_no) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    size_t col = 0;
    if (!quote && flow == 0) {
      col = line.find_first_not_of(' ');
      if (col == std::string_view::npos || line[col] == '#') continue;
      if (scalar_parent != kNone && col > scalar_parent) continue;
      scalar_parent = kNone;
      if (col == 0 && (line.starts_with("---") || line.starts_with("..."))) {
        block.clear();
        col = line.find_first_not_of(' ', 3);
        if (col == std::string_view::npos) continue;
      }
      size_t at = col;
      while (at < line.size() && (line[at] == '-' || line[at] == '?') &&
             (at + 1 == line.size() || line[at + 1] == ' ')) {
        enter(at, line[at] == '-');
        open_key.reset();
        at = line.find_first_not_of(' ', at + 1);
        if (at == std::string_view::npos) at = line.size();
      }
      open_key.reset();
      if (at < line.size() && line[at] != '[' && line[at] != '{' && HasMappingKey(line, at)) {
        enter(at, false);
        std::string_view body = line.substr(0, line.find(" #"));
        while (!body.empty() && (body.back() == ' ' || body.back() == '\t')) body.remove_suffix(1);
        if (body.ends_with(':')) open_key = at;
      }
      if (static_cast<int>(block.size()) > limit) return line_no + 1;
      if (OpensBlockScalar(line)) scalar_parent = col;
    }
    for (size_t p = col; p < line.size(); ++p) {
      char c = line[p];
      if (quote) {
        p = SkipQuoted(line, p, quote);
        continue;
      }
      if (c == '#' && (p == 0 || line[p - 1] == ' ' || line[p - 1] == '\t')) break;
      if ((c == '\'' || c == '"') && NodeStartsAt(line, p, flow > 0)) {
        quote = c;
        p = SkipQuoted(line, p + 1, quote);
      } else if ((c == '[' || c == '{') && (flow > 0 || NodeStartsAt(line, p, false))) {
        if (static_cast<int>(block.size()) + ++flow > limit) return line_no + 1;
      } else if ((c == ']' || c == '}') && flow > 0) {
        --flow;
      }
    }
  }
  return std::nullopt;
}

}  // namespace

Result<MappingSpec> MappingSpec::Parse(const std::string& text, const std::string& origin) {
  if (auto line = LineNestedDeeperThan(text, kMaxDepth))
    return skade::InvalidArgument(origin + ":" + std::to_string(*line) + ": nested deeper than " +
                                  std::to_string(kMaxDepth) + " levels (the limit of a mapping file)");
  Problems problems(origin);
  MappingSpec spec;
  try {
    spec = ParseRoot(YAML::Load(text), problems);
  } catch (const YAML::DeepRecursion& e) {  // what the scan above missed
    return skade::InvalidArgument(origin + ":" + std::to_string(e.mark.line + 1) +
                                  ": nested deeper than yaml-cpp's limit of " +
                                  std::to_string(e.depth()) + " levels");
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
  return path.ends_with(".ron") ? ParseRon(ss.str(), path) : Parse(ss.str(), path);
}

namespace {

void EmitStep(YAML::Emitter& out, const PipelineStep& step);

// A registered custom step stays one line; an out-of-process one carries its runner's
// settings, its columns, the reply's schema and its output steps.
void EmitCustom(YAML::Emitter& out, const CustomStep& c) {
  out << YAML::Key << "custom" << YAML::Value;
  if (c.runner.empty()) {
    out << YAML::Flow << YAML::BeginMap << YAML::Key << "name" << YAML::Value << c.name
        << YAML::EndMap;
    return;
  }
  out << YAML::BeginMap << YAML::Key << "name" << YAML::Value << c.name;
  out << YAML::Key << c.runner << YAML::Value << YAML::Flow << c.settings;
  EmitList(out, "columns", c.columns);
  out << YAML::Key << "schema" << YAML::Value << YAML::DoubleQuoted << c.schema;
  out << YAML::Key << "output" << YAML::Value << YAML::BeginSeq;
  for (const auto& v : c.output_vertices) EmitStep(out, v);
  for (const auto& e : c.output_edges) EmitStep(out, e);
  out << YAML::EndSeq << YAML::EndMap;
}

void EmitStep(YAML::Emitter& out, const PipelineStep& step) {
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
    EmitCustom(out, std::get<CustomStep>(step));
  }
  out << YAML::EndMap;
}

}  // namespace

Result<MappingSpec> MappingSpec::ParseRon(const std::string& text, const std::string& origin) {
  SKADE_ASSIGN_OR_RETURN(std::string yaml, ron::ToYamlText(text, origin));
  return Parse(yaml, origin);
}

std::string MappingSpec::ToRon() const { return ron::Write(*this); }

std::string MappingSpec::ToYaml() const {
  YAML::Emitter out;
  out << YAML::BeginMap << YAML::Key << "graph" << YAML::Value << graph;
  out << YAML::Key << "tables" << YAML::Value << YAML::BeginSeq;
  for (const auto& t : tables) {
    out << YAML::BeginMap << YAML::Key << "table" << YAML::Value << t.table;
    if (!t.source.empty()) out << YAML::Key << "source" << YAML::Value << t.source;
    if (!t.token_file.empty()) out << YAML::Key << "token_file" << YAML::Value << t.token_file;
    out << YAML::Key << "mode" << YAML::Value << std::string(SyncModeName(t.mode));
    EmitList(out, "columns", t.columns);
    if (!t.filter.empty()) out << YAML::Key << "filter" << YAML::Value << t.filter;
    if (t.allow_empty) out << YAML::Key << "allow_empty" << YAML::Value << true;
    if (t.prune) out << YAML::Key << "prune" << YAML::Value << true;
    out << YAML::Key << "pipeline" << YAML::Value << YAML::BeginSeq;
    for (const auto& step : t.pipeline) EmitStep(out, step);
    out << YAML::EndSeq << YAML::EndMap;
  }
  out << YAML::EndSeq << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

}  // namespace bifrost
