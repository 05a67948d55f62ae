// Row filter expressions: parsing, binding to a schema, and evaluation at every
// level a scan prunes at (partition tuples, manifest summaries, file metrics) and
// exactly on rows. Arrow stays out of this header (see arrow_filter.h).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "skade/common/result.h"
#include "skade/format/partition_spec.h"
#include "skade/format/types.h"
#include "skade/format/value.h"

namespace skade::expr {

enum class Op {
  kTrue, kFalse, kAnd, kOr, kNot,
  kEq, kNotEq, kLt, kLtEq, kGt, kGtEq, kIn, kNotIn, kIsNull, kNotNull,
  // Iceberg's isNaN/notNaN (never unknown: a null is not NaN) and startsWith/notStartsWith
  // (written `like 'abc%'`; unknown on a null, as SQL's LIKE).
  kIsNaN, kNotNaN, kStartsWith, kNotStartsWith,
  // SQL's LIKE with any other pattern (`%` any text, `_` one character, `\` escapes): not
  // in Iceberg's expressions; pruned by the pattern's literal prefix.
  kLike, kNotLike,
};

/// A literal as written, before binding gives it a type.
struct UnboundLiteral {
  enum class Kind { kInteger, kFloat, kString, kBool, kNull } kind;
  std::string text;  // digits / decimal text / string contents / "true"
};

struct Expr;
using ExprPtr = std::shared_ptr<const Expr>;

/// An immutable expression node. Predicates (kEq..kNotNull) have a column reference
/// and literals; kAnd/kOr/kNot have children. Unbound: `column` + `unbound_literals`.
/// Bound: also `field_id`, `type` and typed `literals` (converted to the column type).
struct Expr {
  Op op = Op::kTrue;
  std::vector<ExprPtr> children;
  std::string column;  // as written, dotted for nested fields ("addr.city")
  std::vector<UnboundLiteral> unbound_literals;
  int field_id = -1;
  TypePtr type;
  std::vector<Value> literals;

  bool is_predicate() const { return op >= Op::kEq; }
  bool bound() const { return field_id >= 0 || !is_predicate(); }
};

ExprPtr True();
ExprPtr False();
ExprPtr And(ExprPtr a, ExprPtr b);
ExprPtr Or(ExprPtr a, ExprPtr b);
ExprPtr Not(ExprPtr a);
/// A bound predicate on `field` built without parsing (for filters derived from data,
/// e.g. the key range of an upsert). `literals` must already have the field's type.
ExprPtr BoundPredicate(Op op, const NestedField& field, std::vector<Value> literals);

/// Parses e.g. `country = 'SE' and (age >= 18 or vip) and name is not null and
/// id in (1, 2, 3)`. Keywords are case-insensitive; a bare column means `col = true`;
/// strings use single quotes ('' escapes a quote); `!=` and `<>` both mean not-equal;
/// `x not in (...)`, `not (...)`; `x [not] between a and b` (both ends included);
/// `x is [not] nan`; `x [not] like 'pattern'` (`%` any text, `_` one character, `\` escapes
/// either; a prefix and one final `%` is Iceberg's starts-with, a pattern without wildcards
/// `=`). Errors: kInvalidArgument with the position.
Result<ExprPtr> Parse(std::string_view text);

/// Resolves columns against `schema` (top-level name or dotted path, case-insensitive
/// fallback) and converts literals to the column type (e.g. '2024-01-31' for a date,
/// 12.5 for a decimal(10,2)). Errors: kInvalidArgument naming the unknown column (and
/// listing the columns that exist) or the literal that does not fit; predicates on
/// nested struct/list/map columns are refused.
Result<ExprPtr> Bind(const ExprPtr& unbound, const Schema& schema);

/// Readable form, re-parseable by Parse.
std::string ToString(const Expr& e);

/// Field ids referenced by a bound expression.
std::vector<int> ReferencedFieldIds(const Expr& bound);
/// Column names as an expression (bound or not) writes them, each once.
std::vector<std::string> ReferencedColumns(const Expr& e);

/// Column statistics of one data file or one row group, keyed by field id.
/// Bounds use Iceberg's single-value serialization. Missing entries mean "unknown".
struct ColumnStats {
  int64_t record_count = -1;  // -1: unknown
  std::map<int, int64_t> value_counts;
  std::map<int, int64_t> null_value_counts;
  std::map<int, int64_t> nan_value_counts;
  std::map<int, std::string> lower_bounds;
  std::map<int, std::string> upper_bounds;
};

/// Whether rows matching the bound expression might exist given the stats (false means
/// the file/row group can be skipped for sure). Never errors on missing stats.
bool MightMatch(const Expr& bound, const ColumnStats& stats);

/// Projects a bound row filter onto a partition spec: the result is an expression over
/// the partition struct (field_id = partition field id, type = transform result type)
/// that is true for every partition that may contain matching rows (inclusive).
/// Predicates that cannot be projected become kTrue.
Result<ExprPtr> ProjectToPartition(const Expr& bound, const PartitionSpec& spec,
                                   const Schema& schema);

/// Evaluates a projected partition expression on one partition tuple (values in spec
/// order; `spec` gives the field ids). Null comparisons are false; is-null works.
bool EvaluatePartition(const Expr& projected, const PartitionSpec& spec,
                       const std::vector<Value>& tuple);

/// Summary of one partition field across the files of a manifest (manifest list
/// `partitions` entry); bounds are single-value serialized.
struct PartitionFieldSummary {
  bool contains_null = true;
  std::optional<bool> contains_nan;
  std::optional<std::string> lower_bound;
  std::optional<std::string> upper_bound;
};

/// Whether a manifest with these summaries (spec order) may hold matching files.
bool ManifestMightMatch(const Expr& projected, const PartitionSpec& spec,
                        const std::vector<TypePtr>& partition_types,
                        const std::vector<PartitionFieldSummary>& summaries);

}  // namespace skade::expr
