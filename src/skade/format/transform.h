// Partition transforms: identity, bucket[N], truncate[W], year, month, day, hour, void.
#pragma once

#include <string>
#include <string_view>

#include "skade/common/result.h"
#include "skade/format/types.h"
#include "skade/format/value.h"

namespace skade {

enum class TransformKind { kIdentity, kBucket, kTruncate, kYear, kMonth, kDay, kHour, kVoid };

struct Transform {
  TransformKind kind = TransformKind::kIdentity;
  int param = 0;  // bucket count or truncate width

  /// Iceberg's spelling: "identity", "bucket[16]", "truncate[4]", "day", "void".
  std::string ToString() const;
  /// Parses Iceberg's spelling. Errors: kInvalidArgument / kCorrupt by caller's context.
  static Result<Transform> Parse(std::string_view text);

  /// Whether this transform accepts a source column of `source` type.
  bool CanApply(const Type& source) const;
  /// The partition value's type for a given source type
  /// (bucket → int, year/month/hour → int, day → date, truncate/identity → source).
  TypePtr ResultType(const TypePtr& source) const;
  /// Applies the transform to one value per the spec (null → null).
  Result<Value> Apply(const Type& source, const Value& value) const;
  /// Human form of a partition value for paths ("2024-01-31", "2024-01", "2024-01-31-13").
  std::string ValueToPathString(const Type& source, const Value& partition_value) const;
  /// Whether the transform preserves order (for range-predicate projection).
  bool PreservesOrder() const;
};

/// Murmur3 x86 32-bit hash (seed 0) as used by Iceberg's bucket transform.
int32_t Murmur3Hash32(std::string_view bytes);
/// Iceberg's bucket hash of a value (ints/dates hash as long; decimals as minimal BE bytes;
/// strings as UTF-8; uuid as 16 BE bytes; time/timestamps as long µs).
Result<int32_t> BucketHash(const Type& type, const Value& value);

}  // namespace skade
