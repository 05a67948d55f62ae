// The lineage graph: datasets as nodes, "was derived from" as edges (input → output),
// built from lineage events. The API the CLI, server and viewer query.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "skade/common/result.h"
#include "skade/lineage/lineage_event.h"

namespace skade::lineage {

/// A dataset, keyed by (system, name) in its CLI spelling (`ns.table`, `spark:gold.revenue`).
struct GraphNode {
  std::string key;
  std::string system;  // `skade` for this warehouse's tables
  std::string name;
  std::optional<int64_t> latest_snapshot;
  std::optional<int64_t> last_write_ms;  // absent for datasets only ever read
  std::string last_writer;               // actor of the last write
};

/// Input → output, for one job (actor); `count` events, the last at `last_ms`. A job
/// that reads the table it writes (MERGE, INSERT ... SELECT from itself) updates it in
/// place: that is no edge.
struct GraphEdge {
  std::string from;
  std::string to;
  std::string job;
  int64_t count = 0;
  int64_t last_ms = 0;
};

/// A dataset reached by a traversal, `depth` hops from the start.
struct Reached {
  std::string key;
  int depth = 0;
  bool operator==(const Reached&) const = default;
};

/// Which events a graph is built from.
struct GraphWindow {
  std::optional<int64_t> since_ms;  // events at or after
  std::optional<int64_t> until_ms;  // events before
  std::optional<std::string> system;  // only edges touching a dataset of this system
};

class LineageGraph {
 public:
  /// Folds events (any order) into nodes and edges. Dropped tables stay as nodes:
  /// their history is still lineage.
  static LineageGraph Build(const std::vector<LineageEvent>& events, const GraphWindow& window = {});

  const std::map<std::string, GraphNode>& nodes() const { return nodes_; }
  const std::vector<GraphEdge>& edges() const { return edges_; }

  /// Datasets derived (transitively) from `key`, nearest first, at most `max_depth`
  /// hops (0: unlimited). Errors: kNotFound when the graph has no such dataset.
  Result<std::vector<Reached>> Downstream(const std::string& key, int max_depth = 0) const;
  /// Datasets `key` was derived from, nearest first. Errors: kNotFound.
  Result<std::vector<Reached>> Upstream(const std::string& key, int max_depth = 0) const;
  /// A shortest chain of datasets from `from` to `to` along edges; empty when none.
  /// Errors: kNotFound for an unknown dataset.
  Result<std::vector<std::string>> Path(const std::string& from, const std::string& to) const;
  /// Dataset keys per system.
  std::map<std::string, std::vector<std::string>> GroupBySystem() const;

  /// `{"nodes":[...],"edges":[...]}`.
  std::string ToJson() const;
  /// Graphviz, one cluster per system.
  std::string ToDot() const;
  /// Mermaid flowchart, one subgraph per system.
  std::string ToMermaid() const;

 private:
  Result<std::vector<Reached>> Traverse(const std::string& key, int max_depth,
                                        const std::map<std::string, std::vector<std::string>>& adjacency) const;

  std::map<std::string, GraphNode> nodes_;
  std::vector<GraphEdge> edges_;
  std::map<std::string, std::vector<std::string>> out_;  // key → outputs derived from it
  std::map<std::string, std::vector<std::string>> in_;   // key → its inputs
};

}  // namespace skade::lineage
