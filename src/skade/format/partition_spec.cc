// Partition specs and the CLI partition language.
#include "skade/format/partition_spec.h"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace skade {

int PartitionSpec::LastFieldId() const {
  int last = 999;
  for (const auto& f : fields_) last = std::max(last, f.field_id);
  return last;
}

Result<TypePtr> PartitionSpec::PartitionType(const Schema& schema) const {
  std::vector<NestedField> out;
  for (const auto& f : fields_) {
    const NestedField* source = schema.FindField(f.source_id);
    if (!source)
      return InvalidArgument("partition field '" + f.name + "' refers to source column id " +
                             std::to_string(f.source_id) + " which is not in the schema");
    if (!f.transform.CanApply(*source->type))
      return InvalidArgument("partition field '" + f.name + "': cannot apply " +
                             f.transform.ToString() + " to column '" + schema.PathOf(f.source_id) +
                             "' of type " + source->type->ToString());
    out.push_back(NestedField{f.field_id, f.name, false, f.transform.ResultType(source->type), ""});
  }
  return Type::Struct(std::move(out));
}

namespace {

bool IEquals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

bool IsNameChar(char c) {
  auto u = static_cast<unsigned char>(c);
  return std::isalnum(u) || c == '_' || c == '.' || c == '$' || u >= 0x80;
}

struct Token {
  enum Kind { kName, kNumber, kPunct, kEnd } kind = kEnd;
  std::string text;
  size_t pos = 0;
};

// One partition item before resolution: `fn(args) [as name]` or `column [as name]`.
struct Item {
  std::string function;  // empty for a bare column (identity)
  std::vector<Token> args;
  std::string alias;
  size_t pos = 0;
};

class SpecLexer {
 public:
  explicit SpecLexer(std::string_view s) : s_(s) {}

  Result<std::vector<Token>> Tokens() {
    std::vector<Token> out;
    while (true) {
      while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
      Token t;
      t.pos = pos_;
      if (pos_ >= s_.size()) {
        out.push_back(t);
        return out;
      }
      char c = s_[pos_];
      if (c == '(' || c == ')' || c == ',') {
        t.kind = Token::kPunct;
        t.text = std::string(1, c);
        ++pos_;
      } else if (c == '"' || c == '`') {  // quoted column name, doubled quote escapes
        t.kind = Token::kName;
        ++pos_;
        while (true) {
          if (pos_ >= s_.size()) return Err("unterminated quoted name", t.pos);
          if (s_[pos_] == c) {
            if (pos_ + 1 < s_.size() && s_[pos_ + 1] == c) {
              t.text.push_back(c);
              pos_ += 2;
              continue;
            }
            ++pos_;
            break;
          }
          t.text.push_back(s_[pos_++]);
        }
      } else if (IsNameChar(c)) {
        while (pos_ < s_.size() && IsNameChar(s_[pos_])) t.text.push_back(s_[pos_++]);
        bool digits = std::all_of(t.text.begin(), t.text.end(),
                                  [](char ch) { return ch >= '0' && ch <= '9'; });
        t.kind = digits ? Token::kNumber : Token::kName;
      } else {
        return Err(std::string("unexpected character '") + c + "'", pos_);
      }
      out.push_back(std::move(t));
    }
  }

  static std::unexpected<Error> Err(const std::string& what, size_t pos) {
    return InvalidArgument("partition spec: " + what + " at position " + std::to_string(pos + 1));
  }

 private:
  std::string_view s_;
  size_t pos_ = 0;
};

Result<std::vector<Item>> ParseItems(std::string_view text) {
  SpecLexer lexer(text);
  SKADE_ASSIGN_OR_RETURN(std::vector<Token> toks, lexer.Tokens());
  std::vector<Item> items;
  size_t i = 0;
  auto is = [&](std::string_view p) { return toks[i].kind == Token::kPunct && toks[i].text == p; };
  if (toks[0].kind == Token::kEnd) return items;  // unpartitioned
  while (true) {
    Item item;
    item.pos = toks[i].pos;
    if (toks[i].kind != Token::kName && toks[i].kind != Token::kNumber)
      return SpecLexer::Err("expected a column or a transform", toks[i].pos);
    Token head = toks[i++];
    if (is("(")) {
      ++i;
      item.function = head.text;
      while (true) {
        if (toks[i].kind != Token::kName && toks[i].kind != Token::kNumber)
          return SpecLexer::Err("expected a column or a number in " + head.text + "(...)",
                                toks[i].pos);
        item.args.push_back(toks[i++]);
        if (is(")")) {
          ++i;
          break;
        }
        if (!is(",")) return SpecLexer::Err("expected ',' or ')'", toks[i].pos);
        ++i;
      }
    } else {
      item.args.push_back(head);
    }
    if (toks[i].kind == Token::kName && IEquals(toks[i].text, "as")) {
      ++i;
      if (toks[i].kind != Token::kName)
        return SpecLexer::Err("expected a name after 'as'", toks[i].pos);
      item.alias = toks[i++].text;
    }
    items.push_back(std::move(item));
    if (toks[i].kind == Token::kEnd) return items;
    if (!is(",")) return SpecLexer::Err("expected ',' between partition fields", toks[i].pos);
    ++i;
  }
}

struct FunctionInfo {
  std::string_view name;
  TransformKind kind;
  bool has_param;
  std::string_view suffix;  // default name suffix
};

constexpr FunctionInfo kFunctions[] = {
    {"identity", TransformKind::kIdentity, false, ""},
    {"bucket", TransformKind::kBucket, true, "_bucket"},
    {"truncate", TransformKind::kTruncate, true, "_trunc"},
    {"year", TransformKind::kYear, false, "_year"},
    {"years", TransformKind::kYear, false, "_year"},
    {"month", TransformKind::kMonth, false, "_month"},
    {"months", TransformKind::kMonth, false, "_month"},
    {"day", TransformKind::kDay, false, "_day"},
    {"days", TransformKind::kDay, false, "_day"},
    {"hour", TransformKind::kHour, false, "_hour"},
    {"hours", TransformKind::kHour, false, "_hour"},
    {"void", TransformKind::kVoid, false, "_null"},
};

bool IsTimeTransform(TransformKind k) {
  return k == TransformKind::kYear || k == TransformKind::kMonth || k == TransformKind::kDay ||
         k == TransformKind::kHour;
}

}  // namespace

Result<PartitionSpec> ParsePartitionSpec(std::string_view text, const Schema& schema, int spec_id,
                                         int first_field_id) {
  SKADE_ASSIGN_OR_RETURN(std::vector<Item> items, ParseItems(text));
  std::vector<PartitionField> fields;
  auto fail = [&](const Item& item, const std::string& what) {
    return SpecLexer::Err(what, item.pos);
  };
  for (const Item& item : items) {
    const FunctionInfo* fn = &kFunctions[0];  // bare column: identity
    if (!item.function.empty()) {
      fn = nullptr;
      for (const auto& f : kFunctions)
        if (IEquals(item.function, f.name)) fn = &f;
      if (!fn)
        return fail(item, "unknown transform '" + item.function +
                              "' (expected identity, bucket, truncate, year, month, day, hour "
                              "or void)");
    }
    // Arguments: one column, plus the parameter for bucket/truncate (either order).
    const Token* column = nullptr;
    int param = 0;
    size_t want = fn->has_param ? 2 : 1;
    if (item.args.size() != want)
      return fail(item, std::string(fn->name) + " takes " +
                            (fn->has_param ? "a number and a column, e.g. " +
                                                 std::string(fn->name) + "(16, id)"
                                           : "one column"));
    for (const Token& a : item.args) {
      if (fn->has_param && a.kind == Token::kNumber && param == 0) {
        auto [p, ec] = std::from_chars(a.text.data(), a.text.data() + a.text.size(), param);
        if (ec != std::errc() || param <= 0)
          return fail(item, std::string(fn->name) + " needs a positive number, got " + a.text);
      } else if (!column) {
        column = &a;
      } else {
        return fail(item, std::string(fn->name) + " takes a number and a column");
      }
    }
    if (!column || (fn->has_param && param == 0))
      return fail(item, std::string(fn->name) + " takes a number and a column");
    const NestedField* source = schema.FindByPath(column->text);
    if (!source)
      return InvalidArgument("partition spec: unknown column '" + column->text +
                             "' (columns: " + schema.ColumnNames() + ")");
    Transform transform{fn->kind, param};
    if (!transform.CanApply(*source->type))
      return InvalidArgument("partition spec: cannot apply " + transform.ToString() +
                             " to column '" + column->text + "' of type " +
                             source->type->ToString());
    std::string source_name = schema.PathOf(source->id);
    PartitionField field;
    field.source_id = source->id;
    field.field_id = first_field_id + static_cast<int>(fields.size());
    field.transform = transform;
    field.name = item.alias.empty() ? source_name + std::string(fn->suffix) : item.alias;
    for (const auto& existing : fields) {
      if (IEquals(existing.name, field.name))
        return InvalidArgument("partition spec: duplicate partition field name '" + field.name +
                               "'");
      bool same_source = existing.source_id == field.source_id;
      if (same_source &&
          (existing.transform.ToString() == transform.ToString() ||
           (IsTimeTransform(existing.transform.kind) && IsTimeTransform(transform.kind))))
        return InvalidArgument("partition spec: redundant partition " + transform.ToString() +
                               " of '" + source_name + "' (already partitioned by " +
                               existing.transform.ToString() + ")");
    }
    // Like Java: only an identity field may carry the name of a schema column, its own.
    if (const NestedField* clash = schema.FindByPath(field.name)) {
      if (transform.kind != TransformKind::kIdentity || clash->id != source->id)
        return InvalidArgument("partition spec: partition field name '" + field.name +
                               "' conflicts with a schema column");
    }
    fields.push_back(std::move(field));
  }
  return PartitionSpec(spec_id, std::move(fields));
}

}  // namespace skade
