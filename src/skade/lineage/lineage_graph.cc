#include "skade/lineage/lineage_graph.h"

#include <algorithm>
#include <deque>
#include <nlohmann/json.hpp>
#include <set>

namespace skade::lineage {
namespace {

bool InWindow(const LineageEvent& e, const GraphWindow& w) {
  if (w.since_ms && e.ts_ms < *w.since_ms) return false;
  if (w.until_ms && e.ts_ms >= *w.until_ms) return false;
  return true;
}

// Identifiers for dot and mermaid: node keys hold dots, colons and slashes.
std::string NodeId(const std::map<std::string, GraphNode>& nodes, const std::string& key) {
  return "n" + std::to_string(std::distance(nodes.begin(), nodes.find(key)));
}

std::string Quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace

LineageGraph LineageGraph::Build(const std::vector<LineageEvent>& events, const GraphWindow& window) {
  std::vector<const LineageEvent*> ordered;
  for (const auto& e : events)
    if (InWindow(e, window)) ordered.push_back(&e);
  std::stable_sort(ordered.begin(), ordered.end(),
                   [](const LineageEvent* a, const LineageEvent* b) { return a->ts_ms < b->ts_ms; });
  LineageGraph g;
  std::map<std::tuple<std::string, std::string, std::string>, size_t> edge_index;
  auto node = [&](const DatasetRef& ref) -> GraphNode& {
    GraphNode& n = g.nodes_[ref.Key()];
    if (n.key.empty()) n = GraphNode{ref.Key(), ref.SystemKind(), ref.table, std::nullopt, std::nullopt, ""};
    return n;
  };
  for (const LineageEvent* e : ordered) {
    if (window.system) {
      auto of_system = [&](const DatasetRef& r) { return r.SystemKind() == *window.system; };
      if (std::none_of(e->inputs.begin(), e->inputs.end(), of_system) &&
          std::none_of(e->outputs.begin(), e->outputs.end(), of_system))
        continue;
    }
    std::string job = e->job ? e->job->name : e->actor;
    for (const auto& out : e->outputs) {
      GraphNode& n = node(out);
      if (out.snapshot_id) n.latest_snapshot = out.snapshot_id;
      n.last_write_ms = e->ts_ms;
      n.last_writer = e->actor;
    }
    for (const auto& in : e->inputs) {
      GraphNode& n = node(in);
      if (in.snapshot_id && !n.latest_snapshot) n.latest_snapshot = in.snapshot_id;
      for (const auto& out : e->outputs) {
        if (out.Key() == in.Key()) continue;  // read and rewritten in place (MERGE): no self-edge
        auto [it, added] = edge_index.try_emplace({in.Key(), out.Key(), job}, g.edges_.size());
        if (added) {
          g.edges_.push_back(GraphEdge{in.Key(), out.Key(), job, 0, 0});
          auto& outs = g.out_[in.Key()];
          if (std::find(outs.begin(), outs.end(), out.Key()) == outs.end()) outs.push_back(out.Key());
          auto& ins = g.in_[out.Key()];
          if (std::find(ins.begin(), ins.end(), in.Key()) == ins.end()) ins.push_back(in.Key());
        }
        GraphEdge& edge = g.edges_[it->second];
        ++edge.count;
        edge.last_ms = e->ts_ms;
      }
    }
  }
  return g;
}

Result<std::vector<Reached>> LineageGraph::Traverse(
    const std::string& key, int max_depth, const std::map<std::string, std::vector<std::string>>& adjacency) const {
  if (!nodes_.contains(key)) return NotFound("dataset " + key + " is not in the lineage graph");
  std::vector<Reached> out;
  std::set<std::string> seen{key};
  std::deque<Reached> queue{{key, 0}};
  while (!queue.empty()) {
    Reached at = queue.front();
    queue.pop_front();
    if (max_depth > 0 && at.depth >= max_depth) continue;
    auto it = adjacency.find(at.key);
    if (it == adjacency.end()) continue;
    std::vector<std::string> next = it->second;
    std::sort(next.begin(), next.end());
    for (const auto& k : next) {
      if (!seen.insert(k).second) continue;
      out.push_back({k, at.depth + 1});
      queue.push_back({k, at.depth + 1});
    }
  }
  return out;
}

Result<std::vector<Reached>> LineageGraph::Downstream(const std::string& key, int max_depth) const {
  return Traverse(key, max_depth, out_);
}

Result<std::vector<Reached>> LineageGraph::Upstream(const std::string& key, int max_depth) const {
  return Traverse(key, max_depth, in_);
}

Result<std::vector<std::string>> LineageGraph::Path(const std::string& from, const std::string& to) const {
  if (!nodes_.contains(to)) return NotFound("dataset " + to + " is not in the lineage graph");
  SKADE_ASSIGN_OR_RETURN(auto reached, Downstream(from));
  if (std::none_of(reached.begin(), reached.end(), [&](const Reached& r) { return r.key == to; }))
    return std::vector<std::string>();
  // Walk back from `to`: each step to an input one hop nearer to `from`.
  std::map<std::string, int> depth{{from, 0}};
  for (const auto& r : reached) depth[r.key] = r.depth;
  std::vector<std::string> path{to};
  while (path.back() != from) {
    const auto& ins = in_.at(path.back());
    int want = depth.at(path.back()) - 1;
    auto prev = std::find_if(ins.begin(), ins.end(), [&](const std::string& k) {
      auto d = depth.find(k);
      return d != depth.end() && d->second == want;
    });
    path.push_back(*prev);
  }
  std::reverse(path.begin(), path.end());
  return path;
}

std::map<std::string, std::vector<std::string>> LineageGraph::GroupBySystem() const {
  std::map<std::string, std::vector<std::string>> out;
  for (const auto& [key, n] : nodes_) out[n.system].push_back(key);
  return out;
}

std::string LineageGraph::ToJson() const {
  nlohmann::json j = {{"nodes", nlohmann::json::array()}, {"edges", nlohmann::json::array()}};
  for (const auto& [key, n] : nodes_) {
    nlohmann::json node = {{"key", key}, {"system", n.system}, {"name", n.name}};
    node["latest_snapshot"] = n.latest_snapshot ? nlohmann::json(*n.latest_snapshot) : nlohmann::json();
    node["last_write_ms"] = n.last_write_ms ? nlohmann::json(*n.last_write_ms) : nlohmann::json();
    node["last_writer"] = n.last_writer;
    j["nodes"].push_back(std::move(node));
  }
  for (const auto& e : edges_)
    j["edges"].push_back({{"from", e.from}, {"to", e.to}, {"job", e.job}, {"count", e.count}, {"last_ms", e.last_ms}});
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string LineageGraph::ToDot() const {
  std::string out = "digraph lineage {\n  rankdir=LR;\n  node [shape=box];\n";
  for (const auto& [system, keys] : GroupBySystem()) {
    out += "  subgraph " + Quoted("cluster_" + system) + " {\n    label=" + Quoted(system) + ";\n";
    for (const auto& k : keys) out += "    " + NodeId(nodes_, k) + " [label=" + Quoted(nodes_.at(k).name) + "];\n";
    out += "  }\n";
  }
  for (const auto& e : edges_)
    out += "  " + NodeId(nodes_, e.from) + " -> " + NodeId(nodes_, e.to) + " [label=" + Quoted(e.job) + "];\n";
  return out + "}\n";
}

std::string LineageGraph::ToMermaid() const {
  // Mermaid labels are quoted; a quote inside becomes #quot;.
  auto label = [](const std::string& text) {
    std::string out;
    for (char c : text) out += c == '"' ? std::string("#quot;") : std::string(1, c);
    return "\"" + out + "\"";
  };
  std::string out = "flowchart LR\n";
  for (const auto& [system, keys] : GroupBySystem()) {
    out += "  subgraph " + system + "_system[" + label(system) + "]\n";
    for (const auto& k : keys) out += "    " + NodeId(nodes_, k) + "[" + label(nodes_.at(k).name) + "]\n";
    out += "  end\n";
  }
  for (const auto& e : edges_)
    out += "  " + NodeId(nodes_, e.from) + " -->|" + label(e.job) + "| " + NodeId(nodes_, e.to) + "\n";
  return out;
}

}  // namespace skade::lineage
