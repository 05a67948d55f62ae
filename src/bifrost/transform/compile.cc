// Compiling a mapping against the tables' schemas: every name is checked here, so a
// round never meets an unknown column.
#include <algorithm>
#include <set>

#include "bifrost/sink/property_values.h"
#include "bifrost/transform/external_step.h"
#include "bifrost/transform/transform.h"
#include "skade/table/arrow_schema.h"
#include "skade/expr/expression.h"

namespace bifrost {

void TransformRegistry::Register(std::string name, std::shared_ptr<const Transform> transform) {
  transforms_[std::move(name)] = std::move(transform);
}

const Transform* TransformRegistry::Find(const std::string& name) const {
  auto it = transforms_.find(name);
  return it == transforms_.end() ? nullptr : it->second.get();
}

std::string TransformRegistry::Names() const {
  std::string out;
  for (const auto& [name, t] : transforms_) out += (out.empty() ? "" : ", ") + name;
  return out.empty() ? "(none registered)" : out;
}

namespace {

// Labels, types and property names go into Cypher text unquoted.
bool IsIdentifier(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

// FalkorDB stores scalars and lists of scalars only.
std::string PropertyTypeProblem(const skade::Type& t) {
  if (IsStorableProperty(t)) return {};
  return "has type " + t.ToString() +
         ", which a graph property cannot hold (only scalars and lists of scalars; binary is not "
         "stored)";
}

std::string KeyTypeProblem(const skade::Type& t) {
  if (!IsStorableKey(t))
    return "has type " + t.ToString() +
           ", which cannot be a key (use an integer, string, date or timestamp column)";
  return {};
}

struct TableCompiler {
  const TableMapping& tm;
  const skade::Schema& schema;
  const std::map<std::string, std::vector<std::string>>& vertex_keys;  // label → id properties
  std::vector<std::string>& problems;
  std::set<std::string> used;
  std::string holder = "the table";  // what the columns are bound against

  // Two columns landing on one property name would overwrite each other, and a key
  // written over would change which vertex or edge the row is.
  void CheckDistinct(const std::vector<BoundColumn>& keys, const std::vector<BoundColumn>& props,
                     const std::string& role) {
    std::map<std::string, std::string> seen;  // property -> column
    for (const auto* group : {&keys, &props})
      for (const auto& b : *group) {
        auto [it, fresh] = seen.emplace(b.property, b.column);
        if (!fresh && it->second != b.column)  // the same column twice writes the same value
          Problem(role + ": columns '" + it->second + "' and '" + b.column +
                  "' both become property '" + b.property + "'" +
                  (group == &props && std::any_of(keys.begin(), keys.end(),
                                                  [&](const BoundColumn& k) {
                                                    return k.property == b.property;
                                                  })
                       ? " (a key); rename one"
                       : "; rename one"));
      }
  }

  void Problem(const std::string& what) {
    problems.push_back("table '" + tm.table + "' (line " + std::to_string(tm.line) + "): " + what);
  }

  std::optional<BoundColumn> Bind(const std::string& column,
                                  const std::map<std::string, std::string>& rename,
                                  const std::string& role, bool key) {
    const skade::NestedField* f = schema.FindTopLevel(column);
    if (!f) {
      Problem(role + " column '" + column + "' is not in " + holder +
              " (columns: " + schema.ColumnNames() + ")");
      return std::nullopt;
    }
    auto r = rename.find(column);
    std::string property = r == rename.end() ? f->name : r->second;
    if (!IsIdentifier(property)) {
      Problem(role + " property '" + property +
              "' is not a plain name (letters, digits, _); rename it");
      return std::nullopt;
    }
    std::string bad = key ? KeyTypeProblem(*f->type) : PropertyTypeProblem(*f->type);
    if (!bad.empty()) {
      Problem(role + " column '" + f->name + "' " + bad);
      return std::nullopt;
    }
    used.insert(f->name);
    return BoundColumn{f->name, property, f->type};
  }

  std::vector<BoundColumn> BindAll(const std::vector<std::string>& cols,
                                   const std::map<std::string, std::string>& rename,
                                   const std::string& role, bool key) {
    std::vector<BoundColumn> out;
    for (const auto& c : cols)
      if (auto b = Bind(c, rename, role, key)) out.push_back(*b);
    return out;
  }

  void CheckName(const std::string& name, const std::string& what) {
    if (!IsIdentifier(name))
      Problem(what + " '" + name + "' is not a plain name (letters, digits, _)");
  }

  std::vector<BoundColumn> BindEndpoint(const EndpointSpec& ep, const std::string& role) {
    CheckName(ep.label, role + " label");
    auto cols = BindAll(ep.columns, {}, role, true);
    std::vector<std::string> keys = ep.keys;
    if (keys.empty()) {
      auto it = vertex_keys.find(ep.label);
      if (it != vertex_keys.end()) {
        keys = it->second;
      } else if (ep.columns.size() == 1) {
        keys = {"id"};  // the conventional key of a vertex no table of this mapping owns
      } else {
        std::string labels;
        for (const auto& [l, k] : vertex_keys) labels += (labels.empty() ? "" : ", ") + l;
        Problem(role + " label '" + ep.label + "' is not a vertex of this mapping (vertices: " +
                (labels.empty() ? "none" : labels) + "); give its 'keys'");
        return cols;
      }
    }
    if (keys.size() != ep.columns.size()) {
      Problem(role + " has " + std::to_string(ep.columns.size()) + " column(s) but vertex '" +
              ep.label + "' has " + std::to_string(keys.size()) + " key(s)");
      return cols;
    }
    for (size_t i = 0; i < cols.size() && i < keys.size(); ++i) {
      CheckName(keys[i], role + " key");
      cols[i].property = keys[i];
    }
    return cols;
  }

  void CompileVertex(const VertexStep& v, CompiledTable& ct) {
    CheckName(v.label, "vertex label");
    for (const auto& [col, prop] : v.rename)
      if (!schema.FindTopLevel(col))
        Problem("rename of unknown column '" + col + "' (columns: " + schema.ColumnNames() + ")");
    ct.vertices.push_back(
        {v.label, BindAll(v.id_columns, v.rename, "vertex '" + v.label + "' id", true),
         BindAll(v.properties, v.rename, "vertex '" + v.label + "' property", false)});
    CheckDistinct(ct.vertices.back().ids, ct.vertices.back().properties,
                  "vertex '" + v.label + "'");
  }

  void CompileEdge(const EdgeStep& e, CompiledTable& ct) {
    std::string role = std::string(e.fk ? "fk_edges" : "edge") + " '" + e.type + "'";
    CheckName(e.type, "edge type");
    CompiledEdge ce;
    ce.type = e.type;
    ce.src_label = e.src.label;
    ce.dst_label = e.dst.label;
    ce.src = BindEndpoint(e.src, role + " src");
    ce.dst = BindEndpoint(e.dst, role + " dst");
    ce.keys = BindAll(e.key_columns, e.rename, role + " key", true);
    ce.properties = BindAll(e.properties, e.rename, role + " property", false);
    CheckDistinct(ce.keys, ce.properties, role);
    ct.edges.push_back(std::move(ce));
  }

  // An out-of-process step: its columns are the table's, its output steps bind to the
  // reply's declared schema; the runner checks its own settings.
  std::shared_ptr<const Transform> CompileExternal(
      const CustomStep& cs, const CompiledTable& table,
      const std::map<std::string, std::vector<std::string>>& keys) {
    const std::string step = "custom step '" + cs.name + "'";
    std::vector<std::string> columns;  // as the table spells them
    for (const auto& col : cs.columns)
      if (const auto* f = schema.FindTopLevel(col)) {
        used.insert(f->name);
        columns.push_back(f->name);
      } else {
        Problem(step + " column '" + col + "' is not in the table (columns: " +
                schema.ColumnNames() + ")");
      }
    auto declared = skade::ParseSchemaSpec(cs.schema);
    if (!declared) {
      Problem(step + " schema '" + cs.schema + "': " + declared.error().message);
      return nullptr;
    }
    auto reply = std::make_shared<const skade::Schema>(std::move(*declared));
    CompiledTable out{tm, table.ident, reply, {}, {}, {}, {}, {}};
    std::vector<std::string> found;
    TableCompiler oc{tm, *reply, keys, found, {}, step + " reply"};
    for (const auto& v : cs.output_vertices) oc.CompileVertex(v, out);
    for (const auto& e : cs.output_edges) oc.CompileEdge(e, out);
    auto runner = MakeRowRunner(cs);
    if (!runner) found.push_back("table '" + tm.table + "' (line " + std::to_string(tm.line) +
                                 "): " + step + ": " + runner.error().message);
    problems.insert(problems.end(), found.begin(), found.end());
    if (!found.empty()) return nullptr;
    return std::make_shared<ExternalStep>(cs.name, columns, skade::ToArrowSchema(*reply),
                                          std::move(*runner), std::move(out));
  }
};

}  // namespace

Result<std::vector<CompiledTable>> CompileMapping(const MappingSpec& spec,
                                                  const SchemaLookup& lookup,
                                                  const TransformRegistry& registry) {
  std::vector<std::string> problems;
  bool unreachable = false;  // a schema lookup could not reach its source
  // Edge endpoints take the key names of the vertex step that owns their label.
  std::map<std::string, std::vector<std::string>> vertex_keys;
  std::vector<const VertexStep*> vertex_steps;
  for (const auto& tm : spec.tables)
    for (const auto& step : tm.pipeline) {
      if (const auto* v = std::get_if<VertexStep>(&step)) vertex_steps.push_back(v);
      if (const auto* c = std::get_if<CustomStep>(&step))
        for (const auto& v : c->output_vertices) vertex_steps.push_back(&v);
    }
  for (const auto* v : vertex_steps) {
    std::vector<std::string> keys;
    for (const auto& c : v->id_columns) {
      auto r = v->rename.find(c);
      keys.push_back(r == v->rename.end() ? c : r->second);
    }
    auto [it, fresh] = vertex_keys.emplace(v->label, keys);
    if (!fresh && it->second != keys)
      problems.push_back("vertex label '" + v->label + "' is keyed differently by two steps");
  }

  std::vector<CompiledTable> out;
  for (const auto& tm : spec.tables) {
    auto ident = skade::TableIdent::Parse(tm.table);
    if (!ident) {
      problems.push_back("table '" + tm.table + "' (line " + std::to_string(tm.line) +
                         "): " + ident.error().message);
      continue;
    }
    auto schema = lookup(*ident);
    if (!schema) {
      unreachable |= schema.error().kind == skade::ErrorKind::kIoError;
      problems.push_back("table '" + tm.table + "' (line " + std::to_string(tm.line) +
                         "): " + schema.error().message);
      continue;
    }
    CompiledTable ct{tm, *ident, *schema, {}, {}, {}, {}, {}};
    TableCompiler c{tm, **schema, vertex_keys, problems, {}};
    bool needs_all = false;
    for (const auto& step : tm.pipeline) {
      if (const auto* v = std::get_if<VertexStep>(&step)) {
        c.CompileVertex(*v, ct);
      } else if (const auto* e = std::get_if<EdgeStep>(&step)) {
        c.CompileEdge(*e, ct);
      } else if (const auto& cs = std::get<CustomStep>(step); cs.runner.empty()) {
        const Transform* t = registry.Find(cs.name);
        if (!t)
          c.Problem("custom step '" + cs.name +
                    "' is not registered (registered: " + registry.Names() + ")");
        ct.customs.push_back(t);
        needs_all = true;
      } else if (auto ext = c.CompileExternal(cs, ct, vertex_keys)) {
        ct.owned.push_back(ext);
        ct.customs.push_back(ext.get());
        needs_all |= cs.columns.empty();  // it reads every column unless it names them
      }
    }
    if (!tm.filter.empty()) {
      auto parsed = skade::expr::Parse(tm.filter);
      auto bound = parsed ? skade::expr::Bind(*parsed, **schema) : std::unexpected(parsed.error());
      if (!bound) c.Problem("filter '" + tm.filter + "': " + bound.error().message);
    }
    if (!tm.columns.empty()) {
      for (const auto& col : tm.columns)
        if (!(**schema).FindTopLevel(col))
          c.Problem("'columns' names '" + col +
                    "', not in the table (columns: " + (**schema).ColumnNames() + ")");
      for (const auto& u : c.used)
        if (std::find(tm.columns.begin(), tm.columns.end(), u) == tm.columns.end())
          c.Problem("'columns' leaves out '" + u + "', which the pipeline uses");
      ct.projection = tm.columns;
    } else if (!needs_all) {
      for (const auto& f : (**schema).fields())
        if (c.used.contains(f.name)) ct.projection.push_back(f.name);
    }
    out.push_back(std::move(ct));
  }
  if (!problems.empty()) {
    std::string msg;
    for (const auto& p : problems) msg += (msg.empty() ? "" : "\n") + p;
    // A source that could not be reached (a REST catalog) is worth retrying.
    return skade::MakeError(unreachable ? skade::ErrorKind::kIoError : skade::ErrorKind::kInvalidArgument, msg);
  }
  return out;
}

}  // namespace bifrost
