// Transforms turn a table's fetched rows into a GraphMutation. The built-in steps
// (vertex, edge, fk_edges) are compiled from the mapping; `custom` steps are looked
// up by name in a TransformRegistry.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bifrost/mapping/mapping.h"
#include "bifrost/mutation.h"
#include "skade/catalog/catalog.h"
#include "skade/format/types.h"

namespace arrow {
class Table;
}

namespace bifrost {

/// What a transform knows about the rows it is given.
struct TransformContext {
  skade::TableIdent table;
  const skade::Schema* schema;  // the table's schema; rows carry a subset of its columns
  SyncMode mode;
};

/// A user transform. Must be thread-compatible (called from one round at a time).
class Transform {
 public:
  virtual ~Transform() = default;
  virtual Result<GraphMutation> Apply(const TransformContext& ctx,
                                      const std::shared_ptr<arrow::Table>& rows) const = 0;
};

/// Name → transform, for `custom` steps. Register before compiling a mapping.
class TransformRegistry {
 public:
  void Register(std::string name, std::shared_ptr<const Transform> transform);
  const Transform* Find(const std::string& name) const;
  /// Registered names, comma separated ("(none registered)" when empty).
  std::string Names() const;

 private:
  std::map<std::string, std::shared_ptr<const Transform>> transforms_;
};

/// A column used by a step, resolved against the schema.
struct BoundColumn {
  std::string column;    // in the table
  std::string property;  // in the graph
  skade::TypePtr type;
};

struct CompiledVertex {
  std::string label;
  std::vector<BoundColumn> ids;
  std::vector<BoundColumn> properties;
};

struct CompiledEdge {
  std::string type;
  std::string src_label, dst_label;
  std::vector<BoundColumn> src, dst;  // property = the endpoint vertex's key name
  std::vector<BoundColumn> keys;
  std::vector<BoundColumn> properties;
};

/// One table's mapping checked against its schema: ready to run.
struct CompiledTable {
  TableMapping spec;
  skade::TableIdent ident;
  std::shared_ptr<const skade::Schema> schema;
  /// Columns to read; empty = every column (a custom step may need any of them).
  std::vector<std::string> projection;
  std::vector<CompiledVertex> vertices;
  std::vector<CompiledEdge> edges;
  std::vector<const Transform*> customs;
  std::vector<std::shared_ptr<const Transform>> owned;  // the out-of-process steps of customs

  /// Runs the pipeline over fetched rows. For changelog rows (`_change_type`,
  /// `_change_ordinal` present) the last change per key wins: INSERT/UPDATE_AFTER
  /// upsert, DELETE removes the vertex (and its edges) or the edge; UPDATE_BEFORE
  /// only retracts the edges of the old row image (so a changed foreign key re-wires).
  /// Null endpoints give no edge. Errors: kInvalidArgument naming table and column
  /// for a null vertex id.
  Result<GraphMutation> Apply(const std::shared_ptr<arrow::Table>& rows) const;
};

/// Looks up a table's schema; errors name the table and list the ones that exist.
using SchemaLookup =
    std::function<Result<std::shared_ptr<const skade::Schema>>(const skade::TableIdent&)>;

/// Compiles every table of the mapping; reports all problems at once (unknown
/// tables, columns, labels, custom steps, unstorable types), each naming what exists.
Result<std::vector<CompiledTable>> CompileMapping(const MappingSpec& spec,
                                                  const SchemaLookup& lookup,
                                                  const TransformRegistry& registry);

}  // namespace bifrost
