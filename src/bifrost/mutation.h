// The currency of Bifröst: what one round does to the graph, as Arrow tables.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "skade/format/types.h"

namespace arrow {
class Table;
}

namespace bifrost {

/// Vertices of one label: `rows` has the key columns, then the property columns,
/// positionally; `types` gives each column's Iceberg type (for formatting values).
/// As a delete set it carries keys only.
struct VertexSet {
  std::string label;
  std::vector<std::string> keys;
  std::vector<std::string> properties;
  std::vector<skade::TypePtr> types;
  std::shared_ptr<arrow::Table> rows;
};

/// Relationships of one type: `rows` has the source key columns, destination key
/// columns, edge key columns, then property columns. As a delete set: no properties.
struct EdgeSet {
  std::string type;
  std::string src_label;
  std::vector<std::string> src_keys;
  std::string dst_label;
  std::vector<std::string> dst_keys;
  std::vector<std::string> edge_keys;
  std::vector<std::string> properties;
  std::vector<skade::TypePtr> types;
  std::shared_ptr<arrow::Table> rows;
};

/// Applied in this order: vertices, edges, edge deletes, vertex deletes (DETACH).
struct GraphMutation {
  std::vector<VertexSet> vertices;
  std::vector<EdgeSet> edges;
  std::vector<EdgeSet> edge_deletes;
  std::vector<VertexSet> vertex_deletes;

  void Merge(GraphMutation other);
  int64_t VertexRows() const;
  int64_t EdgeRows() const;
  int64_t DeleteRows() const;
};

}  // namespace bifrost
