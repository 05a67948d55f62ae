#include "bifrost/mapping/infer.h"

#include <algorithm>

#include "bifrost/sink/property_values.h"

namespace bifrost {
namespace {

// "order_items" → "OrderItem", "manager" → "Manager".
std::string LabelFor(std::string name) {
  if (name.size() > 3 && name.ends_with("ies"))
    name = name.substr(0, name.size() - 3) + "y";
  else if (name.size() > 1 && name.ends_with('s') && !name.ends_with("ss"))
    name.pop_back();
  std::string out;
  bool upper = true;
  for (char c : name) {
    if (c == '_' || c == '-' || c == ' ') {
      upper = true;
      continue;
    }
    out += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    upper = false;
  }
  return out.empty() ? "Node" : out;
}

std::string Upper(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

Result<InferredMapping> InferMapping(const skade::TableIdent& table, const skade::Schema& schema) {
  InferredMapping out;
  VertexStep vertex;
  vertex.label = LabelFor(table.name);
  out.guesses.push_back("vertex label '" + vertex.label + "' from the table name");

  for (int id : schema.identifier_field_ids())
    if (const auto* f = schema.FindField(id)) vertex.id_columns.push_back(f->name);
  if (!vertex.id_columns.empty()) {
    out.guesses.push_back("id from the table's identifier fields");
  } else if (const auto* f = schema.FindTopLevel("id"); f && IsStorableKey(*f->type)) {
    vertex.id_columns.push_back(f->name);
    out.guesses.push_back("id column 'id' by its name");
  } else {
    for (const auto& f : schema.fields())
      if (IsStorableKey(*f.type) && f.required) {
        vertex.id_columns.push_back(f.name);
        out.guesses.push_back("id column '" + f.name + "': the first required key-like column");
        break;
      }
  }
  if (vertex.id_columns.empty())
    return skade::InvalidArgument(
        "table '" + table.ToString() +
        "': no column can be a vertex id (no identifier fields, no 'id', no required "
        "integer/string column; columns: " +
        schema.ColumnNames() + ")");

  std::vector<EdgeStep> fks;
  for (const auto& f : schema.fields()) {
    bool is_id = std::find(vertex.id_columns.begin(), vertex.id_columns.end(), f.name) !=
                 vertex.id_columns.end();
    if (is_id) continue;
    if (f.name.size() > 3 && f.name.ends_with("_id") && IsStorableKey(*f.type) &&
        vertex.id_columns.size() == 1) {
      std::string stem = f.name.substr(0, f.name.size() - 3);
      EdgeStep e;
      e.fk = true;
      e.type = "HAS_" + Upper(stem);
      e.src = {vertex.label, {vertex.id_columns[0]}, {}};
      e.dst = {LabelFor(stem), {f.name}, {}};
      out.guesses.push_back("fk_edges '" + e.type + "' from '" + f.name + "' to label '" +
                            e.dst.label +
                            "' (keyed on 'id' unless that label's own mapping says otherwise)");
      fks.push_back(std::move(e));
      continue;
    }
    if (IsStorableProperty(*f.type)) {
      vertex.properties.push_back(f.name);
      continue;
    }
    out.unmapped.push_back(f.name + " (" + f.type->ToString() +
                           "): a graph property holds only scalars and lists of scalars");
  }

  TableMapping tm;
  tm.table = table.ToString();
  tm.mode = SyncMode::kFull;
  tm.pipeline.push_back(std::move(vertex));
  for (auto& e : fks) tm.pipeline.push_back(std::move(e));
  out.spec.graph = table.ns;
  out.spec.tables.push_back(std::move(tm));
  return out;
}

std::string InferredMapping::ToYaml() const {
  std::string out = "# candidate mapping: review before use\n";
  for (const auto& g : guesses) out += "# guess: " + g + "\n";
  for (const auto& u : unmapped) out += "# unmapped: " + u + "\n";
  return out + spec.ToYaml();
}

std::string InferredMapping::ToRon() const {
  std::string out = "// candidate mapping: review before use\n";
  for (const auto& g : guesses) out += "// guess: " + g + "\n";
  for (const auto& u : unmapped) out += "// unmapped: " + u + "\n";
  return out + spec.ToRon();
}

}  // namespace bifrost
