// The viewer's lineage model (docs/api.md, `/graph`): lineage events folded into
// nodes with their history (first seen, dropped, writes, run state, columns), edges
// per (from, to, job) with their runs, and column lineage from the OpenLineage
// `columnLineage` facets of ingested events. Also the JSON shapes of these and of
// one lineage event, shared by `/graph`, `/node` and the event stream.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "server/server_internal.h"
#include "skade/lineage/lineage_event.h"
#include "skade/lineage/lineage_graph.h"
#include "skade/lineage/openlineage.h"

namespace skade::server {

struct ApiColumn {
  std::string name;
  std::string type;
};

struct ColumnInput {
  std::string from;  // dataset key
  std::string column;
  std::string type;     // DIRECT | INDIRECT
  std::string subtype;  // "" when the facet gives none
  bool masking = false;
};

/// One output column and what it came from; column "*" holds the facet's
/// dataset-wide dependencies.
struct ColumnLineage {
  std::string to;
  std::string column;
  std::string job;
  std::vector<ColumnInput> inputs;
};

/// A lineage event with what its raw OpenLineage payload says beyond the event.
struct EventFacts {
  std::string run_state = "COMPLETE";  // eventType; skade's own events are COMPLETE
  std::vector<std::optional<std::vector<ApiColumn>>> input_columns;   // schema facets
  std::vector<std::optional<std::vector<ApiColumn>>> output_columns;  // schema facets
  std::vector<std::optional<int64_t>> output_rows;  // outputStatistics.rowCount
  std::vector<ColumnLineage> column_lineage;        // sorted by (to, column)
};

/// Reads the facts of one event. `mapper` names the datasets of column lineage that
/// the event does not list as inputs or outputs. Never fails: what does not parse is
/// left out.
EventFacts ReadEventFacts(const lineage::LineageEvent& event, const lineage::RunEventMapper& mapper);

struct ViewNode {
  std::string key, system, name, ns;
  bool is_table = false;
  int64_t first_seen_ms = 0;
  std::optional<int64_t> dropped_ms;
  std::optional<int64_t> latest_snapshot;
  std::deque<int64_t> write_times_ms;  // the last 32 writes, oldest first
  std::string last_writer;
  std::optional<int64_t> row_count;
  std::optional<std::string> run_state;
  std::optional<std::vector<ApiColumn>> columns;
  /// Jobs that read this dataset and wrote it back (MERGE, INSERT ... SELECT from
  /// itself): in-place updates, which are not edges.
  std::set<std::string> updated_in_place_by;
  /// The newest write (a COMPLETE event naming it as an output), or null.
  const lineage::LineageEvent* last_write = nullptr;
  std::optional<int64_t> last_write_ms() const {
    return write_times_ms.empty() ? std::nullopt : std::optional(write_times_ms.back());
  }
};

struct ViewEdge {
  std::string from, to, job, actor;
  int64_t count = 0;
  int64_t first_ms = 0;
  int64_t last_ms = 0;
  std::vector<std::string> run_ids;  // the last 16 distinct, newest last
  std::string run_state;
};

/// Which events and edges a view holds.
struct ViewFilter {
  std::optional<int64_t> since_ms;  // events at or after
  std::optional<int64_t> until_ms;  // events before
  std::set<std::string> systems;    // only edges touching one of them (empty: all)
};

/// Move-only: nodes point into the events it holds.
class LineageView {
 public:
  LineageView() = default;
  LineageView(LineageView&&) = default;
  LineageView& operator=(LineageView&&) = default;
  LineageView(const LineageView&) = delete;
  LineageView& operator=(const LineageView&) = delete;

  /// Folds `events` (stored order: by time) inside the filter's window. Table nodes
  /// get their columns and row count from `catalog` when the table still exists.
  static LineageView Build(std::vector<lineage::LineageEvent> events, const ViewFilter& filter,
                           Catalog& catalog);

  /// Nodes after the systems filter, by key.
  const std::map<std::string, ViewNode>& nodes() const { return nodes_; }
  /// Edges after the systems filter, sorted by (from, to, job).
  const std::vector<ViewEdge>& edges() const { return edges_; }
  /// Column lineage of the nodes, sorted by (to, column).
  const std::vector<ColumnLineage>& column_lineage() const { return column_lineage_; }
  /// Nodes per system in the whole window, before the systems filter.
  const std::map<std::string, int64_t>& system_totals() const { return system_totals_; }
  /// The facts of a node's last write (null when never written).
  const EventFacts* FactsOf(const lineage::LineageEvent* event) const;

  /// Datasets reached from `key` along edges (downstream: outputs; upstream:
  /// inputs), nearest first then by key, at most `max_depth` hops (0: unlimited).
  /// `key` must be a node.
  std::vector<lineage::Reached> Reach(const std::string& key, bool downstream, int max_depth) const;
  /// Direct neighbours of `key`.
  const std::set<std::string>& Neighbours(const std::string& key, bool downstream) const;

 private:
  std::vector<lineage::LineageEvent> events_;
  std::map<const lineage::LineageEvent*, EventFacts> facts_;
  std::map<std::string, ViewNode> nodes_;
  std::vector<ViewEdge> edges_;
  std::vector<ColumnLineage> column_lineage_;
  std::map<std::string, int64_t> system_totals_;
  std::map<std::string, std::set<std::string>> out_, in_;
};

/// Optional values as JSON (`null` when absent); snapshot ids as decimal strings.
Json OptionalJson(const std::optional<int64_t>& v);
Json SnapshotIdJson(const std::optional<int64_t>& id);
Json ColumnsJson(const std::optional<std::vector<ApiColumn>>& columns);
Json NodeJson(const ViewNode& node, bool with_columns);
Json EdgeJson(const ViewEdge& edge);
Json ColumnLineageJson(const ColumnLineage& entry);
/// `ApiLineageEvent`: the event with its datasets as {key, system, name, namespace,
/// snapshot_id} (outputs also row_count and columns), run_state and column lineage.
/// Outputs that are tables of `catalog` take their row count from the snapshot
/// written and their columns from the table's current schema.
Json LineageEventJson(const lineage::LineageEvent& event, const EventFacts& facts, Catalog& catalog);

}  // namespace skade::server
