// Partition specs: how a table's rows map to partition tuples.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "skade/common/result.h"
#include "skade/format/transform.h"
#include "skade/format/types.h"

namespace skade {

struct PartitionField {
  int source_id = 0;
  int field_id = 0;  // from 1000 up
  std::string name;
  Transform transform;
};

class PartitionSpec {
 public:
  PartitionSpec() = default;
  PartitionSpec(int spec_id, std::vector<PartitionField> fields)
      : spec_id_(spec_id), fields_(std::move(fields)) {}

  int spec_id() const { return spec_id_; }
  const std::vector<PartitionField>& fields() const { return fields_; }
  bool unpartitioned() const { return fields_.empty(); }
  /// Highest partition field id, 999 when unpartitioned.
  int LastFieldId() const;

  /// The struct of partition values (field ids = partition field ids).
  /// Errors: kInvalidArgument when a source column is missing or the transform cannot apply.
  Result<TypePtr> PartitionType(const Schema& schema) const;

 private:
  int spec_id_ = 0;
  std::vector<PartitionField> fields_;
};

/// Parses the CLI partition language against a schema, e.g.
/// `day(ts), bucket(16,id), truncate(4,name), country, year(ts), month(ts), hour(ts)`.
/// Field ids start at `first_field_id`. Names follow Iceberg's defaults
/// (`ts_day`, `id_bucket`, `name_trunc`, `country`, `ts_year`, `ts_month`, `ts_hour`).
Result<PartitionSpec> ParsePartitionSpec(std::string_view text, const Schema& schema,
                                         int spec_id = 0, int first_field_id = 1000);

}  // namespace skade
