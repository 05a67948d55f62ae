// `bifrost infer`: a candidate mapping from a table's schema, for a human to review.
#pragma once

#include <string>
#include <vector>

#include "bifrost/mapping/mapping.h"
#include "skade/catalog/catalog.h"
#include "skade/format/types.h"

namespace bifrost {

/// A candidate and how it was reached: every guessed role is listed in `guesses`, and
/// every column that could not be mapped (nested or binary types) in `unmapped`;
/// no column is silently dropped.
struct InferredMapping {
  MappingSpec spec;
  std::vector<std::string> guesses;
  std::vector<std::string> unmapped;

  /// The spec as YAML, preceded by the guesses and unmapped columns as comments.
  std::string ToYaml() const;
  /// The same as RON, the notes as `//` comments.
  std::string ToRon() const;
};

/// One vertex keyed on a guessed id (the identifier fields, else `id`, else the first
/// key-like column), scalar columns as properties, one fk_edges per `*_id` column.
/// Errors: kInvalidArgument when no column can serve as a key.
Result<InferredMapping> InferMapping(const skade::TableIdent& table, const skade::Schema& schema);

}  // namespace bifrost
