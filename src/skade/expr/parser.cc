// Recursive-descent parser of the row filter language (see expression.h).
//
//   expr      := or
//   or        := and ("or" and)*
//   and       := not ("and" not)*
//   not       := "not" not | primary
//   primary   := "(" expr ")" | "true" | "false" | predicate | literal cmp column
//   predicate := column [cmp literal | "is" ["not"] ("null" | "nan") | ["not"] "in" "(" literal,+ ")"
//                        | ["not"] "between" literal "and" literal | ["not"] "like" 'pattern']
//   column    := ident ("." ident)* | "quoted" | `quoted`
//   literal   := [+-] number | 'string' | true | false      (null only in "is null")
#include <cctype>
#include <optional>

#include "skade/expr/expression.h"
#include "skade/expr/expression_internal.h"

namespace skade::expr {
namespace {

constexpr int kMaxDepth = 256;  // keeps hostile input from exhausting the stack

struct Token {
  enum Kind { kIdent, kQuotedIdent, kNumber, kString, kOp, kLParen, kRParen, kComma, kSign, kEnd };
  Kind kind = kEnd;
  std::string text;
  size_t pos = 0;         // byte offset in the input
  bool is_float = false;  // numbers: has a '.' or an exponent
};

bool IsIdentStart(char c) {
  auto u = static_cast<unsigned char>(c);
  return std::isalpha(u) || c == '_' || u >= 0x80;
}
bool IsIdentChar(char c) {
  return IsIdentStart(c) || std::isdigit(static_cast<unsigned char>(c)) || c == '$';
}
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

bool KeywordIs(const Token& t, std::string_view kw) {
  if (t.kind != Token::kIdent || t.text.size() != kw.size()) return false;
  for (size_t i = 0; i < kw.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(t.text[i])) != kw[i]) return false;
  return true;
}

bool IsReserved(const Token& t) {
  for (auto kw : {"and", "or", "not", "in", "is", "null", "true", "false"})
    if (KeywordIs(t, kw)) return true;
  return false;
}

std::string Describe(const Token& t) {
  switch (t.kind) {
    case Token::kEnd:
      return "end of input";
    case Token::kString:
      return "string '" + t.text + "'";
    case Token::kQuotedIdent:
      return "\"" + t.text + "\"";
    default:
      return "'" + t.text + "'";
  }
}

std::unexpected<Error> SyntaxError(size_t pos, const std::string& what) {
  return InvalidArgument("filter syntax error at position " + std::to_string(pos + 1) + ": " +
                         what);
}

Result<std::vector<Token>> Lex(std::string_view s) {
  std::vector<Token> out;
  size_t i = 0;
  while (true) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    Token t;
    t.pos = i;
    if (i >= s.size()) {
      out.push_back(t);
      return out;
    }
    char c = s[i];
    if (c == '\'' || c == '"' || c == '`') {
      // Quoted string or identifier; the quote character doubled escapes itself.
      t.kind = c == '\'' ? Token::kString : Token::kQuotedIdent;
      ++i;
      while (true) {
        if (i >= s.size())
          return SyntaxError(
              t.pos, std::string("unterminated ") + (c == '\'' ? "string" : "quoted column name"));
        if (s[i] == c) {
          if (i + 1 < s.size() && s[i + 1] == c) {
            t.text.push_back(c);
            i += 2;
            continue;
          }
          ++i;
          break;
        }
        t.text.push_back(s[i++]);
      }
    } else if (IsDigit(c) || (c == '.' && i + 1 < s.size() && IsDigit(s[i + 1]))) {
      t.kind = Token::kNumber;
      size_t start = i;
      while (i < s.size() && IsDigit(s[i])) ++i;
      if (i < s.size() && s[i] == '.') {
        t.is_float = true;
        ++i;
        while (i < s.size() && IsDigit(s[i])) ++i;
      }
      if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
        size_t j = i + 1;
        if (j < s.size() && (s[j] == '+' || s[j] == '-')) ++j;
        if (j < s.size() && IsDigit(s[j])) {
          t.is_float = true;
          i = j;
          while (i < s.size() && IsDigit(s[i])) ++i;
        }
      }
      if (i < s.size() && IsIdentChar(s[i]))
        return SyntaxError(i, "unexpected character '" + std::string(1, s[i]) + "' in number");
      t.text = std::string(s.substr(start, i - start));
    } else if (IsIdentStart(c)) {
      t.kind = Token::kIdent;
      size_t start = i;
      while (true) {
        while (i < s.size() && IsIdentChar(s[i])) ++i;
        // Dotted paths: addr.city
        if (i + 1 < s.size() && s[i] == '.' && IsIdentStart(s[i + 1])) {
          ++i;
          continue;
        }
        break;
      }
      t.text = std::string(s.substr(start, i - start));
    } else if (c == '(' || c == ')' || c == ',') {
      t.kind = c == '(' ? Token::kLParen : (c == ')' ? Token::kRParen : Token::kComma);
      t.text = std::string(1, c);
      ++i;
    } else if (c == '+' || c == '-') {
      t.kind = Token::kSign;
      t.text = std::string(1, c);
      ++i;
    } else if (c == '=' || c == '<' || c == '>' || c == '!') {
      t.kind = Token::kOp;
      std::string_view two = s.substr(i, 2);
      if (two == "==" || two == "!=" || two == "<>" || two == "<=" || two == ">=") {
        t.text = std::string(two);
        i += 2;
      } else if (c == '!') {
        return SyntaxError(i, "unexpected '!' (use '!=' or 'not')");
      } else {
        t.text = std::string(1, c);
        ++i;
      }
    } else {
      return SyntaxError(i, "unexpected character '" + std::string(1, c) + "'");
    }
    out.push_back(std::move(t));
  }
}

Op ComparisonOp(std::string_view text) {
  if (text == "=" || text == "==") return Op::kEq;
  if (text == "!=" || text == "<>") return Op::kNotEq;
  if (text == "<") return Op::kLt;
  if (text == "<=") return Op::kLtEq;
  if (text == ">") return Op::kGt;
  return Op::kGtEq;
}

class Parser {
 public:
  explicit Parser(std::vector<Token> tokens) : toks_(std::move(tokens)) {}

  Result<ExprPtr> ParseAll() {
    SKADE_ASSIGN_OR_RETURN(ExprPtr e, ParseOr());
    if (Peek().kind != Token::kEnd) return Expected("'and', 'or' or the end of the filter");
    return e;
  }

 private:
  const Token& Peek(size_t ahead = 0) const {
    return toks_[std::min(pos_ + ahead, toks_.size() - 1)];
  }
  const Token& Next() {
    const Token& t = toks_[pos_];
    if (pos_ + 1 < toks_.size()) ++pos_;
    return t;
  }
  std::unexpected<Error> Expected(const std::string& what) const {
    return SyntaxError(Peek().pos, "expected " + what + " but found " + Describe(Peek()));
  }

  Result<ExprPtr> ParseOr() {
    if (++depth_ > kMaxDepth) return SyntaxError(Peek().pos, "filter is nested too deeply");
    SKADE_ASSIGN_OR_RETURN(ExprPtr left, ParseAnd());
    while (KeywordIs(Peek(), "or")) {
      Next();
      SKADE_ASSIGN_OR_RETURN(ExprPtr right, ParseAnd());
      left = Combine(Op::kOr, std::move(left), std::move(right));
    }
    --depth_;
    return left;
  }

  Result<ExprPtr> ParseAnd() {
    SKADE_ASSIGN_OR_RETURN(ExprPtr left, ParseNot());
    while (KeywordIs(Peek(), "and")) {
      Next();
      SKADE_ASSIGN_OR_RETURN(ExprPtr right, ParseNot());
      left = Combine(Op::kAnd, std::move(left), std::move(right));
    }
    return left;
  }

  Result<ExprPtr> ParseNot() {
    if (KeywordIs(Peek(), "not")) {
      Next();
      if (++depth_ > kMaxDepth) return SyntaxError(Peek().pos, "filter is nested too deeply");
      SKADE_ASSIGN_OR_RETURN(ExprPtr inner, ParseNot());
      --depth_;
      auto e = std::make_shared<Expr>();
      e->op = Op::kNot;
      e->children.push_back(std::move(inner));
      return ExprPtr(e);
    }
    return ParsePrimary();
  }

  // The parser keeps the tree as written (no true/false folding) so ToString shows it.
  static ExprPtr Combine(Op op, ExprPtr a, ExprPtr b) {
    auto e = std::make_shared<Expr>();
    e->op = op;
    e->children = {std::move(a), std::move(b)};
    return e;
  }

  Result<ExprPtr> ParsePrimary() {
    const Token& t = Peek();
    if (t.kind == Token::kLParen) {
      Next();
      SKADE_ASSIGN_OR_RETURN(ExprPtr inner, ParseOr());
      if (Peek().kind != Token::kRParen) return Expected("')'");
      Next();
      return inner;
    }
    bool bool_kw = KeywordIs(t, "true") || KeywordIs(t, "false");
    if (bool_kw && Peek(1).kind != Token::kOp) {
      Next();
      return KeywordIs(t, "true") ? True() : False();
    }
    if (t.kind == Token::kNumber || t.kind == Token::kString || t.kind == Token::kSign || bool_kw) {
      // literal op column, e.g. 5 < x  ⇒  x > 5
      SKADE_ASSIGN_OR_RETURN(UnboundLiteral lit, ParseLiteral());
      if (Peek().kind != Token::kOp) return Expected("a comparison operator after the literal");
      Op op = internal::FlipOp(ComparisonOp(Next().text));
      SKADE_ASSIGN_OR_RETURN(std::string column, ParseColumn());
      return internal::MakeUnboundPredicate(op, std::move(column), {std::move(lit)});
    }
    if (t.kind == Token::kIdent && IsReserved(t) && !KeywordIs(t, "null"))
      return Expected("a column, a literal, 'not' or '('");
    if (KeywordIs(t, "null"))
      return SyntaxError(t.pos, "null can only be used in 'is null' / 'is not null'");
    SKADE_ASSIGN_OR_RETURN(std::string column, ParseColumn());
    const Token& n = Peek();
    if (n.kind == Token::kOp) {
      Op op = ComparisonOp(Next().text);
      SKADE_ASSIGN_OR_RETURN(UnboundLiteral lit, ParseLiteral());
      return internal::MakeUnboundPredicate(op, std::move(column), {std::move(lit)});
    }
    if (KeywordIs(n, "is")) {
      Next();
      bool negated = false;
      if (KeywordIs(Peek(), "not")) {
        Next();
        negated = true;
      }
      if (KeywordIs(Peek(), "nan")) {
        Next();
        return internal::MakeUnboundPredicate(negated ? Op::kNotNaN : Op::kIsNaN, std::move(column), {});
      }
      if (!KeywordIs(Peek(), "null")) return Expected("'null' or 'nan' after 'is'");
      Next();
      return internal::MakeUnboundPredicate(negated ? Op::kNotNull : Op::kIsNull, std::move(column),
                                            {});
    }
    const bool negated = KeywordIs(n, "not");
    const Token& word = negated ? Peek(1) : n;
    if (KeywordIs(word, "between")) {
      if (negated) Next();
      Next();
      SKADE_ASSIGN_OR_RETURN(UnboundLiteral low, ParseLiteral());
      if (!KeywordIs(Peek(), "and")) return Expected("'and' between the two ends of 'between'");
      Next();
      SKADE_ASSIGN_OR_RETURN(UnboundLiteral high, ParseLiteral());
      // not (x >= a and x <= b) is x < a or x > b, unknown on a null either way
      auto end = [&](Op op, UnboundLiteral lit) {
        return internal::MakeUnboundPredicate(negated ? internal::NegateOp(op) : op, column, {std::move(lit)});
      };
      return Combine(negated ? Op::kOr : Op::kAnd, end(Op::kGtEq, std::move(low)), end(Op::kLtEq, std::move(high)));
    }
    if (KeywordIs(word, "like")) {
      if (negated) Next();
      Next();
      const Token& pattern = Peek();
      if (pattern.kind != Token::kString) return Expected("a 'pattern' after 'like'");
      SKADE_ASSIGN_OR_RETURN(auto like, LikeKind(pattern));
      Next();
      const Op op = negated ? internal::NegateOp(like.first) : like.first;
      return internal::MakeUnboundPredicate(op, std::move(column),
                                            {UnboundLiteral{UnboundLiteral::Kind::kString, std::move(like.second)}});
    }
    if (KeywordIs(word, "in")) {
      if (negated) Next();
      Next();
      if (Peek().kind != Token::kLParen) return Expected("'(' after 'in'");
      Next();
      std::vector<UnboundLiteral> lits;
      while (true) {
        SKADE_ASSIGN_OR_RETURN(UnboundLiteral lit, ParseLiteral());
        lits.push_back(std::move(lit));
        if (Peek().kind == Token::kRParen) break;
        if (Peek().kind != Token::kComma) return Expected("',' or ')' in the in-list");
        Next();
      }
      Next();
      return internal::MakeUnboundPredicate(negated ? Op::kNotIn : Op::kIn, std::move(column),
                                            std::move(lits));
    }
    if (negated) return SyntaxError(n.pos, "expected 'in', 'between' or 'like' after 'not'");
    // A bare column is a boolean test: `vip` means `vip = true`.
    return internal::MakeUnboundPredicate(Op::kEq, std::move(column),
                                          {UnboundLiteral{UnboundLiteral::Kind::kBool, "true"}});
  }

  // What a LIKE pattern asks, and its literal: = with the text (no wildcard), starts-with
  // with the prefix (a final '%' its only wildcard), else like with the pattern as written.
  // A backslash makes the next character plain.
  Result<std::pair<Op, std::string>> LikeKind(const Token& t) {
    std::string text;
    std::optional<Op> op;
    for (size_t i = 0; i < t.text.size(); ++i) {
      const char c = t.text[i];
      if (c == '\\') {
        if (++i == t.text.size()) return SyntaxError(t.pos, "the like pattern ends in a lone '\\'");
        text += t.text[i];
      } else if (c == '%' || c == '_') {
        if (!op) op = c == '%' && i + 1 == t.text.size() ? Op::kStartsWith : Op::kLike;
      } else {
        text += c;
      }
    }
    if (!op) return std::pair{Op::kEq, std::move(text)};
    if (*op == Op::kStartsWith) return std::pair{*op, std::move(text)};
    return std::pair{Op::kLike, t.text};
  }

  Result<std::string> ParseColumn() {
    const Token& t = Peek();
    if (t.kind == Token::kQuotedIdent) {
      if (t.text.empty()) return SyntaxError(t.pos, "empty quoted column name");
      return std::string(Next().text);
    }
    if (t.kind == Token::kIdent && !IsReserved(t)) return std::string(Next().text);
    return Expected("a column name");
  }

  Result<UnboundLiteral> ParseLiteral() {
    const Token& t = Peek();
    using K = UnboundLiteral::Kind;
    if (t.kind == Token::kString) return UnboundLiteral{K::kString, Next().text};
    if (KeywordIs(t, "true") || KeywordIs(t, "false")) {
      Next();
      return UnboundLiteral{K::kBool, KeywordIs(t, "true") ? "true" : "false"};
    }
    if (KeywordIs(t, "null"))
      return SyntaxError(t.pos, "null can only be used in 'is null' / 'is not null'");
    std::string sign;
    if (t.kind == Token::kSign) {
      sign = Next().text == "-" ? "-" : "";
      if (Peek().kind != Token::kNumber) return Expected("a number after the sign");
    }
    if (Peek().kind == Token::kNumber) {
      const Token& num = Next();
      return UnboundLiteral{num.is_float ? K::kFloat : K::kInteger, sign + num.text};
    }
    return Expected("a literal (number, 'string', true or false)");
  }

  std::vector<Token> toks_;
  size_t pos_ = 0;
  int depth_ = 0;
};

}  // namespace

Result<ExprPtr> Parse(std::string_view text) {
  SKADE_ASSIGN_OR_RETURN(std::vector<Token> tokens, Lex(text));
  if (tokens.size() == 1) return SyntaxError(0, "the filter is empty");
  Parser parser(std::move(tokens));
  return parser.ParseAll();
}

}  // namespace skade::expr
