#include "skade/table/schema_update.h"

#include <algorithm>
#include <cmath>
#include <functional>

#include <nlohmann/json.hpp>

namespace skade {

bool IsAllowedPromotion(const Type& from, const Type& to) {
  if (from.Equals(to)) return true;
  if (from.id == TypeId::kInt && to.id == TypeId::kLong) return true;
  if (from.id == TypeId::kFloat && to.id == TypeId::kDouble) return true;
  if (from.id == TypeId::kDecimal && to.id == TypeId::kDecimal)
    return to.scale == from.scale && to.precision >= from.precision;
  return false;
}

SchemaUpdate& SchemaUpdate::AddColumn(std::string path, TypePtr type, std::optional<std::string> after,
                                      std::optional<std::string> default_text, bool required) {
  changes_.push_back(
      {Change::kAdd, std::move(path), std::move(type), "", std::move(after), std::move(default_text), required});
  return *this;
}
SchemaUpdate& SchemaUpdate::RenameColumn(std::string path, std::string new_name) {
  changes_.push_back({Change::kRename, std::move(path), nullptr, std::move(new_name), std::nullopt});
  return *this;
}
SchemaUpdate& SchemaUpdate::DropColumn(std::string path) {
  changes_.push_back({Change::kDrop, std::move(path), nullptr, "", std::nullopt});
  return *this;
}
SchemaUpdate& SchemaUpdate::WidenColumn(std::string path, TypePtr type) {
  changes_.push_back({Change::kWiden, std::move(path), std::move(type), "", std::nullopt});
  return *this;
}
SchemaUpdate& SchemaUpdate::MakeOptional(std::string path) {
  changes_.push_back({Change::kOptional, std::move(path), nullptr, "", std::nullopt});
  return *this;
}
SchemaUpdate& SchemaUpdate::SetIdentifierFields(std::vector<std::string> columns) {
  identifiers_ = std::move(columns);
  return *this;
}

Result<std::vector<int>> IdentifierFieldIds(const Schema& schema, const std::vector<std::string>& columns) {
  std::vector<int> ids;
  for (const auto& col : columns) {
    const NestedField* f = schema.FindTopLevel(col);
    if (!f)
      return InvalidArgument("identifier column '" + col + "' is not in the schema (columns: " + schema.ColumnNames() +
                             ")");
    if (!f->required) return InvalidArgument("identifier column '" + col + "' must be required (mark it with !)");
    if (!f->type->is_primitive() || f->type->id == TypeId::kFloat || f->type->id == TypeId::kDouble)
      return InvalidArgument("identifier column '" + col + "' must be a non-floating primitive");
    if (std::find(ids.begin(), ids.end(), f->id) != ids.end())
      return InvalidArgument("identifier column '" + col + "' is named twice");
    ids.push_back(f->id);
  }
  return ids;
}

Result<std::vector<const NestedField*>> KeyColumns(const Schema& schema) {
  std::vector<const NestedField*> out;
  for (int id : schema.identifier_field_ids()) {
    const NestedField* f = schema.FindField(id);
    if (!f) continue;
    if (const NestedField* top = schema.TopLevelOf(id); !top || top->id != id)
      return InvalidArgument("identifier field '" + schema.PathOf(id) +
                             "' is inside a struct; skade's upsert and delete --keys match by top-level columns "
                             "(set top-level ones with alter TABLE set-identifier COLS)");
    out.push_back(f);
  }
  return out;
}

namespace {

// Fields of the struct, list or map (`container`; the schema: kStruct) that holds
// `path`'s last component ("s.a", "tags.element", "m.value", "l.element.x"); nullptr when
// the parent does not exist or is a primitive.
std::vector<NestedField>* ParentFields(std::vector<NestedField>& top, const std::string& path, std::string* leaf,
                                       TypeId* container) {
  std::vector<NestedField>* level = &top;
  *container = TypeId::kStruct;
  size_t start = 0;
  while (true) {
    size_t dot = path.find('.', start);
    std::string part = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (dot == std::string::npos) {
      *leaf = part;
      return level;
    }
    auto it = std::find_if(level->begin(), level->end(), [&](const NestedField& f) { return f.name == part; });
    if (it == level->end() || it->type->is_primitive()) return nullptr;
    *container = it->type->id;
    auto copy = std::make_shared<Type>(*it->type);  // types are immutable: copy on write
    it->type = copy;
    level = &copy->fields;
    start = dot + 1;
  }
}

TypePtr Renumber(const TypePtr& t, int* next) {
  if (!t->is_nested()) return t;
  auto copy = std::make_shared<Type>(*t);
  for (auto& f : copy->fields) {
    f.id = ++*next;
    f.type = Renumber(f.type, next);
  }
  return copy;
}

}  // namespace

namespace {

// A column default typed as text, as Iceberg's JSON form of the value: booleans and
// numbers as JSON ones, the rest as their text (dates, times and timestamps in ISO form,
// binary and fixed values in lowercase hex, as input takes them too).
Result<std::string> DefaultJson(const TableMetadata& base, const Type& type, const std::string& text) {
  if (base.format_version < 3)
    return InvalidArgument("column defaults need format version 3 (this table is " +
                           std::to_string(base.format_version) + "; create --property format-version=3)");
  if (type.is_nested()) return InvalidArgument("skade gives defaults to columns of other types than " + type.ToString());
  SKADE_ASSIGN_OR_RETURN(Value v, ParseValue(type, text));
  if (const double* d = std::get_if<double>(&v); d && !std::isfinite(*d))
    return InvalidArgument("a default must be a finite number, not " + text);
  if (const float* f = std::get_if<float>(&v); f && !std::isfinite(*f))
    return InvalidArgument("a default must be a finite number, not " + text);
  switch (type.id) {
    case TypeId::kBoolean: return nlohmann::json(std::get<bool>(v)).dump();
    case TypeId::kInt:
    case TypeId::kLong:
    case TypeId::kFloat:
    case TypeId::kDouble: return FormatValue(type, v);
    default: return nlohmann::json(FormatValue(type, v)).dump();
  }
}

}  // namespace

Result<TableMetadata> SchemaUpdate::Apply(const TableMetadata& base) const {
  const Schema& current = *base.schema();
  std::vector<NestedField> fields = current.fields();
  std::vector<int> identifiers = current.identifier_field_ids();
  int last_id = base.last_column_id;
  std::vector<std::string> problems;
  for (const auto& c : changes_) {
    std::string leaf;
    TypeId container = TypeId::kStruct;
    std::vector<NestedField>* parent = ParentFields(fields, c.path, &leaf, &container);
    if (!parent) {
      problems.push_back("no struct, list or map column holds '" + c.path + "'");
      continue;
    }
    auto it = std::find_if(parent->begin(), parent->end(), [&](const NestedField& f) { return f.name == leaf; });
    // A list's element and a map's key and value are fixed parts: they change type or
    // become optional (not a map's key, which Iceberg keeps as it is), nothing else.
    if (container != TypeId::kStruct) {
      const std::string owner = c.path.substr(0, c.path.size() - leaf.size() - 1);
      const std::string parts = container == TypeId::kList ? "its element ('" + owner + ".element')"
                                                           : "its key and value ('" + owner + ".key', '" + owner + ".value')";
      const std::string kind = container == TypeId::kList ? "list" : "map";
      if (it == parent->end() || c.kind == Change::kAdd) {
        problems.push_back("'" + owner + "' is a " + kind + ": it holds only " + parts + ", so '" + c.path +
                           "' cannot be " + (c.kind == Change::kAdd ? "added" : "changed"));
        continue;
      }
      if (c.kind == Change::kRename || c.kind == Change::kDrop) {
        problems.push_back("cannot " + std::string(c.kind == Change::kRename ? "rename" : "drop") + " '" + c.path +
                           "': a " + kind + " holds only " + parts);
        continue;
      }
      if (leaf == "key") {
        problems.push_back("cannot change '" + c.path + "': a map's keys stay as they are");
        continue;
      }
    }
    if (c.kind == Change::kAdd) {
      if (it != parent->end()) {
        problems.push_back("column '" + c.path + "' already exists");
        continue;
      }
      NestedField f{++last_id, leaf, false, Renumber(c.type, &last_id), ""};
      if (c.default_text) {
        auto json = DefaultJson(base, *c.type, *c.default_text);
        if (!json) {
          problems.push_back("default of '" + c.path + "': " + json.error().message);
          continue;
        }
        // The rows written before read as the default, and writes fill it in (v3).
        f.initial_default = f.write_default = *json;
        f.required = c.required;
      } else if (c.required) {
        problems.push_back("column '" + c.path + "' cannot be added required without a default");
        continue;
      }
      auto pos = parent->end();
      if (c.after) {
        pos = std::find_if(parent->begin(), parent->end(), [&](const NestedField& x) { return x.name == *c.after; });
        if (pos == parent->end()) {
          problems.push_back("--after column '" + *c.after + "' does not exist");
          continue;
        }
        ++pos;
      }
      parent->insert(pos, std::move(f));
      continue;
    }
    if (it == parent->end()) {
      problems.push_back("unknown column '" + c.path + "' (columns: " + current.ColumnNames() + ")");
      continue;
    }
    switch (c.kind) {
      case Change::kRename:
        if (c.name.empty() || c.name.find('.') != std::string::npos) {
          problems.push_back("invalid new name '" + c.name + "'");
        } else if (std::any_of(parent->begin(), parent->end(), [&](const NestedField& f) { return f.name == c.name; })) {
          problems.push_back("cannot rename '" + c.path + "' to '" + c.name + "': that name exists");
        } else {
          it->name = c.name;
        }
        break;
      case Change::kDrop: {
        bool is_identifier = std::find(identifiers.begin(), identifiers.end(), it->id) != identifiers.end();
        // Any spec, the older ones too: Java's readers (Spark) cannot load a table whose
        // spec names a dropped column (apache/iceberg#10234). The column or a field in it.
        const PartitionSpec* user = nullptr;
        const PartitionField* used = nullptr;
        Schema dropped(0, {*it});
        for (const auto& spec : base.specs)  // the default spec named first
          for (const auto& pf : spec.fields())
            if ((!used || spec.spec_id() == base.default_spec_id) && dropped.FindField(pf.source_id))
              user = &spec, used = &pf;
        if (is_identifier && !identifiers_)
          problems.push_back("cannot drop '" + c.path + "': it is an identifier column");
        else if (used && user->spec_id() == base.default_spec_id)
          problems.push_back("cannot drop '" + c.path + "': the partition spec uses it (field '" + used->name + "')");
        else if (used)
          problems.push_back("cannot drop '" + c.path + "': the earlier partition spec " +
                             std::to_string(user->spec_id()) + " uses it (field '" + used->name +
                             "'), and Iceberg's Java readers cannot load a table whose partition spec names a "
                             "dropped column");
        else parent->erase(it);
        break;
      }
      case Change::kWiden:
        if (!it->type->is_primitive() || !IsAllowedPromotion(*it->type, *c.type)) {
          problems.push_back("cannot change '" + c.path + "' from " + it->type->ToString() + " to " +
                             c.type->ToString() + " (allowed: int→long, float→double, wider decimal precision)");
        } else {
          it->type = c.type;
        }
        break;
      case Change::kOptional:
        if (!identifiers_ && std::find(identifiers.begin(), identifiers.end(), it->id) != identifiers.end())
          problems.push_back("cannot make '" + c.path + "' optional: it is an identifier column");
        else it->required = false;
        break;
      default:
        break;
    }
  }
  if (identifiers_) {
    if (auto ids = IdentifierFieldIds(Schema(0, fields), *identifiers_)) identifiers = *std::move(ids);
    else problems.push_back(ids.error().message);
  }
  if (!problems.empty()) {
    return InvalidArgument(JoinProblems(problems));
  }
  TableMetadata next = base;
  int new_id = 0;
  for (const auto& s : base.schemas) new_id = std::max(new_id, s->schema_id() + 1);
  Schema evolved(new_id, std::move(fields), identifiers);
  SKADE_RETURN_IF_ERROR(CheckTypesForFormat(evolved, base.format_version));
  // Re-use an identical earlier schema instead of adding a duplicate.
  for (const auto& s : base.schemas)
    if (s->SameFields(evolved)) {
      next.current_schema_id = s->schema_id();
      return next;
    }
  next.schemas.push_back(std::make_shared<Schema>(std::move(evolved)));
  next.current_schema_id = new_id;
  next.last_column_id = std::max(last_id, base.last_column_id);
  return next;
}

}  // namespace skade
