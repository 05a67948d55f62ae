#include "skade/format/types.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <functional>

#include "skade/common/nesting.h"

namespace skade {
namespace {

bool IEquals(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::optional<int> ParseInt(std::string_view s) {
  s = Trim(s);
  int v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

}  // namespace

TypePtr Type::Primitive(TypeId id) {
  auto t = std::make_shared<Type>();
  t->id = id;
  return t;
}

TypePtr Type::Decimal(int precision, int scale) {
  auto t = std::make_shared<Type>();
  t->id = TypeId::kDecimal;
  t->precision = precision;
  t->scale = scale;
  return t;
}

TypePtr Type::Fixed(int length) {
  auto t = std::make_shared<Type>();
  t->id = TypeId::kFixed;
  t->length = length;
  return t;
}

TypePtr Type::Struct(std::vector<NestedField> fields) {
  auto t = std::make_shared<Type>();
  t->id = TypeId::kStruct;
  t->fields = std::move(fields);
  return t;
}

TypePtr Type::List(NestedField element) {
  auto t = std::make_shared<Type>();
  t->id = TypeId::kList;
  element.name = "element";
  t->fields.push_back(std::move(element));
  return t;
}

TypePtr Type::Map(NestedField key, NestedField value) {
  auto t = std::make_shared<Type>();
  t->id = TypeId::kMap;
  key.name = "key";
  key.required = true;
  value.name = "value";
  t->fields.push_back(std::move(key));
  t->fields.push_back(std::move(value));
  return t;
}

std::string Type::ToString() const {
  switch (id) {
    case TypeId::kBoolean: return "boolean";
    case TypeId::kInt: return "int";
    case TypeId::kLong: return "long";
    case TypeId::kFloat: return "float";
    case TypeId::kDouble: return "double";
    case TypeId::kDecimal:
      return "decimal(" + std::to_string(precision) + "," + std::to_string(scale) + ")";
    case TypeId::kDate: return "date";
    case TypeId::kTime: return "time";
    case TypeId::kTimestamp: return "timestamp";
    case TypeId::kTimestampTz: return "timestamptz";
    case TypeId::kTimestampNs: return "timestamp_ns";
    case TypeId::kTimestampTzNs: return "timestamptz_ns";
    case TypeId::kString: return "string";
    case TypeId::kUuid: return "uuid";
    case TypeId::kBinary: return "binary";
    case TypeId::kFixed: return "fixed[" + std::to_string(length) + "]";
    case TypeId::kStruct: {
      std::string s = "struct<";
      for (size_t i = 0; i < fields.size(); ++i) {
        if (i) s += ",";
        s += fields[i].name + ":" + fields[i].type->ToString();
      }
      return s + ">";
    }
    case TypeId::kList: return "list<" + element().type->ToString() + ">";
    case TypeId::kMap:
      return "map<" + key().type->ToString() + "," + value().type->ToString() + ">";
  }
  return "?";
}

bool Type::Equals(const Type& o) const {
  if (id != o.id || precision != o.precision || scale != o.scale || length != o.length ||
      fields.size() != o.fields.size())
    return false;
  for (size_t i = 0; i < fields.size(); ++i) {
    const auto& a = fields[i];
    const auto& b = o.fields[i];
    if (a.id != b.id || a.name != b.name || a.required != b.required || !a.type->Equals(*b.type))
      return false;
  }
  return true;
}

Result<TypePtr> ParsePrimitiveType(std::string_view name) {
  std::string_view n = Trim(name);
  static const std::pair<std::string_view, TypeId> kSimple[] = {
      {"boolean", TypeId::kBoolean}, {"int", TypeId::kInt},       {"long", TypeId::kLong},
      {"float", TypeId::kFloat},     {"double", TypeId::kDouble}, {"date", TypeId::kDate},
      {"time", TypeId::kTime},       {"timestamp", TypeId::kTimestamp},
      {"timestamptz", TypeId::kTimestampTz}, {"string", TypeId::kString},
      {"timestamp_ns", TypeId::kTimestampNs}, {"timestamptz_ns", TypeId::kTimestampTzNs},
      {"uuid", TypeId::kUuid},       {"binary", TypeId::kBinary},
  };
  for (auto& [s, id] : kSimple)
    if (IEquals(n, s)) return Type::Primitive(id);
  // CLI aliases that users type out of habit.
  if (IEquals(n, "bool")) return Type::Primitive(TypeId::kBoolean);
  if (IEquals(n, "integer")) return Type::Primitive(TypeId::kInt);
  if (IEquals(n, "bigint")) return Type::Primitive(TypeId::kLong);
  if (IEquals(n, "timestamp_tz")) return Type::Primitive(TypeId::kTimestampTz);
  auto args = [&](std::string_view prefix, char open, char close) -> std::optional<std::string_view> {
    if (n.size() < prefix.size() + 2 || !IEquals(n.substr(0, prefix.size()), prefix))
      return std::nullopt;
    std::string_view rest = Trim(n.substr(prefix.size()));
    if (rest.size() < 2 || rest.front() != open || rest.back() != close) return std::nullopt;
    return rest.substr(1, rest.size() - 2);
  };
  if (auto a = args("decimal", '(', ')')) {
    auto comma = a->find(',');
    if (comma == std::string_view::npos)
      return InvalidArgument("decimal needs precision and scale: '" + std::string(n) + "'");
    auto p = ParseInt(a->substr(0, comma));
    auto s = ParseInt(a->substr(comma + 1));
    if (!p || !s || *p < 1 || *p > 38 || *s < 0 || *s > *p)
      return InvalidArgument("invalid decimal type '" + std::string(n) +
                             "' (precision 1..38, 0 <= scale <= precision)");
    return Type::Decimal(*p, *s);
  }
  std::optional<std::string_view> fa = args("fixed", '[', ']');
  if (!fa) fa = args("fixed", '(', ')');
  if (fa) {
    auto l = ParseInt(*fa);
    if (!l || *l < 1) return InvalidArgument("invalid fixed type '" + std::string(n) + "'");
    return Type::Fixed(*l);
  }
  for (std::string_view v3 : {"unknown", "variant", "geometry", "geography"})
    if (n.size() >= v3.size() && IEquals(n.substr(0, v3.size()), v3))
      return Unsupported("type '" + std::string(n) + "' (Iceberg format version 3) is not supported by skade yet");
  return InvalidArgument("unknown type '" + std::string(n) + "'");
}

Schema::Schema(int schema_id, std::vector<NestedField> fields, std::vector<int> identifier_field_ids)
    : schema_id_(schema_id),
      fields_(std::move(fields)),
      identifier_field_ids_(std::move(identifier_field_ids)) {}

namespace {
const NestedField* FindIn(const std::vector<NestedField>& fields, int id) {
  for (const auto& f : fields) {
    if (f.id == id) return &f;
    if (f.type && f.type->is_nested())
      if (auto* r = FindIn(f.type->fields, id)) return r;
  }
  return nullptr;
}

const NestedField* FindName(const std::vector<NestedField>& fields, std::string_view name) {
  for (const auto& f : fields)
    if (f.name == name) return &f;
  for (const auto& f : fields)
    if (IEquals(f.name, name)) return &f;
  return nullptr;
}

bool PathIn(const std::vector<NestedField>& fields, int id, std::string* path) {
  for (const auto& f : fields) {
    if (f.id == id) {
      *path = f.name;
      return true;
    }
    if (f.type && f.type->is_nested()) {
      std::string sub;
      if (PathIn(f.type->fields, id, &sub)) {
        *path = f.name + "." + sub;
        return true;
      }
    }
  }
  return false;
}

int MaxId(const std::vector<NestedField>& fields) {
  int m = 0;
  for (const auto& f : fields) {
    m = std::max(m, f.id);
    if (f.type && f.type->is_nested()) m = std::max(m, MaxId(f.type->fields));
  }
  return m;
}
}  // namespace

const NestedField* Schema::FindField(int id) const { return FindIn(fields_, id); }

const NestedField* Schema::TopLevelOf(int id) const {
  for (const auto& f : fields_)
    if (f.id == id || FindIn(f.type->fields, id)) return &f;
  return nullptr;
}

const NestedField* Schema::FindTopLevel(std::string_view name) const {
  return FindName(fields_, name);
}

const NestedField* Schema::FindByPath(std::string_view path) const {
  const std::vector<NestedField>* level = &fields_;
  const NestedField* found = nullptr;
  while (true) {
    auto dot = path.find('.');
    std::string_view part = path.substr(0, dot);
    found = FindName(*level, part);
    if (!found) {
      // A top-level name may itself contain dots.
      return level == &fields_ ? FindName(fields_, path) : nullptr;
    }
    if (dot == std::string_view::npos) return found;
    if (found->type->id != TypeId::kStruct) return nullptr;
    level = &found->type->fields;
    path.remove_prefix(dot + 1);
  }
}

std::string Schema::PathOf(int id) const {
  std::string p;
  PathIn(fields_, id, &p);
  return p;
}

int Schema::HighestFieldId() const { return MaxId(fields_); }

std::optional<NestedField> PruneField(const NestedField& field, const std::vector<int>& keep) {
  if (std::find(keep.begin(), keep.end(), field.id) != keep.end()) return field;
  if (field.type->id != TypeId::kStruct) return std::nullopt;
  std::vector<NestedField> kept;
  for (const auto& child : field.type->fields)
    if (auto c = PruneField(child, keep)) kept.push_back(*std::move(c));
  if (kept.empty()) return std::nullopt;
  NestedField out = field;
  out.type = Type::Struct(std::move(kept));
  return out;
}

std::string Schema::ColumnNames() const {
  std::string s;
  for (const auto& f : fields_) {
    if (!s.empty()) s += ", ";
    s += f.name;
  }
  return s;
}

bool Schema::SameFields(const Schema& other) const {
  if (fields_.size() != other.fields_.size() ||
      identifier_field_ids_ != other.identifier_field_ids_)
    return false;
  return Type::Struct(fields_)->Equals(*Type::Struct(other.fields_));
}

namespace {

// Recursive-descent parser of the CLI schema language.
class SpecParser {
 public:
  explicit SpecParser(std::string_view s) : s_(s) {}

  Result<Schema> ParseSchema() {
    std::vector<NestedField> fields;
    SkipWs();
    if (AtEnd()) return InvalidArgument("schema is empty");
    while (true) {
      SKADE_ASSIGN_OR_RETURN(auto f, ParseField(true));
      for (const auto& e : fields)
        if (IEquals(e.name, f.name)) return InvalidArgument("duplicate column '" + f.name + "'");
      fields.push_back(std::move(f));
      SkipWs();
      if (AtEnd()) break;
      if (!Eat(',')) return Err("expected ',' between columns");
    }
    return Schema(0, std::move(fields));
  }

 private:
  Result<NestedField> ParseField(bool allow_required) {
    SkipWs();
    size_t start = pos_;
    while (!AtEnd() && s_[pos_] != ':' && s_[pos_] != ',' && s_[pos_] != '>' && s_[pos_] != '<')
      ++pos_;
    std::string name(Trim(s_.substr(start, pos_ - start)));
    if (name.empty()) return Err("expected a column name");
    if (!Eat(':')) return Err("expected ':' after column '" + name + "'");
    NestedField f;
    f.id = next_id_++;
    f.name = name;
    SKADE_ASSIGN_OR_RETURN(f.type, ParseType());
    SkipWs();
    if (Eat('!')) f.required = true;
    return f;
  }

  Result<TypePtr> ParseType() {
    // Each nested type recurses once; the limit keeps deep input off the stack.
    if (++depth_ > kMaxTypeDepth)
      return Err("types nested deeper than " + std::to_string(kMaxTypeDepth) + " levels");
    struct Leave {
      int& d;
      ~Leave() { --d; }
    } leave{depth_};
    SkipWs();
    size_t start = pos_;
    while (!AtEnd() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_'))
      ++pos_;
    std::string_view word = s_.substr(start, pos_ - start);
    SkipWs();
    if (IEquals(word, "struct")) {
      if (!Eat('<')) return Err("expected '<' after struct");
      std::vector<NestedField> fields;
      while (true) {
        SKADE_ASSIGN_OR_RETURN(auto f, ParseField(true));
        fields.push_back(std::move(f));
        SkipWs();
        if (Eat('>')) break;
        if (!Eat(',')) return Err("expected ',' or '>' in struct");
      }
      return Type::Struct(std::move(fields));
    }
    if (IEquals(word, "list")) {
      if (!Eat('<')) return Err("expected '<' after list");
      NestedField e;
      e.id = next_id_++;
      SKADE_ASSIGN_OR_RETURN(e.type, ParseType());
      SkipWs();
      if (Eat('!')) e.required = true;
      if (!Eat('>')) return Err("expected '>' closing list");
      return Type::List(std::move(e));
    }
    if (IEquals(word, "map")) {
      if (!Eat('<')) return Err("expected '<' after map");
      NestedField k, v;
      k.id = next_id_++;
      v.id = next_id_++;
      SKADE_ASSIGN_OR_RETURN(k.type, ParseType());
      if (!Eat(',')) return Err("expected ',' between map key and value types");
      SKADE_ASSIGN_OR_RETURN(v.type, ParseType());
      SkipWs();
      if (Eat('!')) v.required = true;
      if (!Eat('>')) return Err("expected '>' closing map");
      return Type::Map(std::move(k), std::move(v));
    }
    std::string text(word);
    if (!AtEnd() && (s_[pos_] == '(' || s_[pos_] == '[')) {
      char close = s_[pos_] == '(' ? ')' : ']';
      size_t end = s_.find(close, pos_);
      if (end == std::string_view::npos) return Err("unclosed type arguments");
      text += s_.substr(pos_, end + 1 - pos_);
      pos_ = end + 1;
    }
    if (text.empty()) return Err("expected a type");
    auto t = ParsePrimitiveType(text);
    if (!t) return Err(t.error().message);
    return t;
  }

  std::unexpected<Error> Err(const std::string& what) {
    return InvalidArgument("schema spec: " + what + " at position " + std::to_string(pos_));
  }
  void SkipWs() {
    while (!AtEnd() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool Eat(char c) {
    SkipWs();
    if (!AtEnd() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool AtEnd() const { return pos_ >= s_.size(); }

  std::string_view s_;
  size_t pos_ = 0;
  int next_id_ = 1;
  int depth_ = -1;  // the top-level type of a column is depth 0
};

}  // namespace

int TypeDepth(const Type& type) {
  int deepest = 0;
  for (const auto& f : type.fields) deepest = std::max(deepest, 1 + TypeDepth(*f.type));
  return deepest;
}

int SchemaDepth(const Schema& schema) {
  int deepest = 0;
  for (const auto& f : schema.fields()) deepest = std::max(deepest, TypeDepth(*f.type));
  return deepest;
}

Status CheckSchemaDepth(const Schema& schema) {
  for (const auto& f : schema.fields())
    if (TypeDepth(*f.type) > kMaxTypeDepth)
      return InvalidArgument("column '" + f.name + "' is nested deeper than " + std::to_string(kMaxTypeDepth) +
                             " levels");
  return {};
}

Status CheckTypesForFormat(const Schema& schema, int format_version) {
  if (format_version >= 3) return {};
  std::function<Status(const NestedField&, const std::string&)> check = [&](const NestedField& f,
                                                                            const std::string& path) -> Status {
    if (IsNanoTimestamp(f.type->id))
      return InvalidArgument("column '" + path + "' of type " + f.type->ToString() + " needs format version 3 (this table is " +
                             std::to_string(format_version) + "; create --property format-version=3)");
    for (const auto& child : f.type->fields) SKADE_RETURN_IF_ERROR(check(child, path + "." + child.name));
    return {};
  };
  for (const auto& f : schema.fields()) SKADE_RETURN_IF_ERROR(check(f, f.name));
  return {};
}

Result<Schema> ParseSchemaSpec(std::string_view spec) {
  // Ids: top-level fields first (as Iceberg assigns them), then nested ones.
  SpecParser p(spec);
  SKADE_ASSIGN_OR_RETURN(Schema parsed, p.ParseSchema());
  // Reassign ids breadth-first so top-level columns get 1..N like other engines do.
  int next = static_cast<int>(parsed.fields().size()) + 1;
  std::function<TypePtr(const TypePtr&)> renumber_type = [&](const TypePtr& t) -> TypePtr {
    if (!t->is_nested()) return t;
    auto copy = std::make_shared<Type>(*t);
    for (auto& f : copy->fields) f.id = next++;
    for (auto& f : copy->fields) f.type = renumber_type(f.type);
    return copy;
  };
  std::vector<NestedField> fields = parsed.fields();
  for (size_t i = 0; i < fields.size(); ++i) fields[i].id = static_cast<int>(i) + 1;
  for (auto& f : fields) f.type = renumber_type(f.type);
  return Schema(0, std::move(fields));
}

}  // namespace skade
