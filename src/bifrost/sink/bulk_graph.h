// A graph that does not exist yet, assembled in memory from mutations and handed to
// FalkorDB's GRAPH.BULK in one load: the fast way to do a first build. Adding a
// mutation gives the graph MERGE would give (one node per label and key, one edge per
// type, endpoints and edge key; later rows win; a null removes a property; an edge's
// missing endpoint becomes a node with only its key), so a first build by either path
// ends in the same graph.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "bifrost/mutation.h"
#include "bifrost/sink/graph_sink.h"

namespace bifrost {

/// One GRAPH.BULK command's arguments after the graph key and the optional BEGIN.
struct BulkCall {
  int64_t nodes = 0;
  int64_t edges = 0;
  std::vector<std::string> node_blobs;
  std::vector<std::string> edge_blobs;
};

class BulkGraph {
 public:
  BulkGraph();
  ~BulkGraph();
  BulkGraph(const BulkGraph&) = delete;
  BulkGraph& operator=(const BulkGraph&) = delete;

  /// Adds a mutation's vertices and edges. The report counts its rows and the nodes,
  /// relationships and property values it created first. Errors: kInvalidArgument
  /// for a value FalkorDB cannot store or a null key (column named); kUnsupported
  /// when MERGE would do something a new graph cannot express: deletes, or a label
  /// (relationship type) keyed by different properties in different places. After an
  /// error the graph is unusable (build the round another way).
  Result<SinkReport> Add(const GraphMutation& mutation);

  int64_t NodeCount() const;
  int64_t EdgeCount() const;
  /// Every label with the properties that key it (for the indexes MERGE needs later).
  bifrost::LabelKeys Labels() const;

  /// The GRAPH.BULK commands that create the graph, nodes first, each about
  /// `max_call_bytes` at most (one oversized record still travels alone). Stops at
  /// the first error `send` returns.
  Status ForEachCall(size_t max_call_bytes, const std::function<Status(BulkCall&)>& send) const;

 private:
  struct Label;
  struct RelType;
  Result<Label*> LabelFor(const std::string& name, const std::vector<std::string>& keys);
  Result<RelType*> TypeFor(const std::string& name, const std::vector<std::string>& keys);

  std::vector<std::unique_ptr<Label>> labels_;
  std::unordered_map<std::string, size_t> label_index_;
  std::vector<std::unique_ptr<RelType>> types_;
  std::unordered_map<std::string, size_t> type_index_;
};

}  // namespace bifrost
