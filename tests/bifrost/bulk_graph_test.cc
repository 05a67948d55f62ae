// BulkGraph gives the graph MERGE would: one node per label and key, later rows win,
// nulls remove, missing endpoints become key-only nodes, edges collapse by endpoints
// and edge key. The GRAPH.BULK calls are decoded here by an independent reader of the
// format, so node numbering and splitting into calls are checked too.
#include "bifrost/sink/bulk_graph.h"

#include <arrow/api.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <optional>

#include "testing/matchers.h"

namespace bifrost {
namespace {

using skade::ErrorKind;
using skade::TypeId;
using skade::testing::IsError;
using skade::testing::IsOk;
using ::testing::HasSubstr;

template <typename Builder, typename T>
std::shared_ptr<arrow::Array> Column(const std::vector<std::optional<T>>& values) {
  Builder b;
  for (const auto& v : values) EXPECT_TRUE((v ? b.Append(*v) : b.AppendNull()).ok());
  return b.Finish().ValueOrDie();
}
auto Longs(const std::vector<std::optional<int64_t>>& v) {
  return Column<arrow::Int64Builder>(v);
}
auto Texts(const std::vector<std::optional<std::string>>& v) {
  return Column<arrow::StringBuilder>(v);
}
auto Doubles(const std::vector<std::optional<double>>& v) {
  return Column<arrow::DoubleBuilder>(v);
}

std::shared_ptr<arrow::Table> Rows(const std::vector<std::shared_ptr<arrow::Array>>& columns) {
  arrow::FieldVector fields;
  for (size_t i = 0; i < columns.size(); ++i)
    fields.push_back(arrow::field("c" + std::to_string(i), columns[i]->type()));
  return arrow::Table::Make(arrow::schema(fields), columns);
}

skade::TypePtr T(TypeId id) { return skade::Type::Primitive(id); }

VertexSet Vertices(std::string label, std::vector<std::string> props,
                   std::vector<skade::TypePtr> types,
                   const std::vector<std::shared_ptr<arrow::Array>>& columns) {
  return VertexSet{std::move(label), {"id"}, std::move(props), std::move(types), Rows(columns)};
}

// The graph a sequence of GRAPH.BULK calls creates, read back from the bytes.
struct Decoded {
  struct Node {
    std::string label;
    std::map<std::string, std::string> props;
  };
  struct Edge {
    std::string type;
    uint64_t src, dst;
    std::map<std::string, std::string> props;
  };
  std::vector<Node> nodes;
  std::vector<Edge> edges;
  int calls = 0;

  // Finds a node by label and its "id" property.
  const Node* Find(const std::string& label, const std::string& id) const {
    for (const auto& n : nodes)
      if (n.label == label && n.props.count("id") && n.props.at("id") == id) return &n;
    return nullptr;
  }
  uint64_t IdOf(const Node* n) const { return static_cast<uint64_t>(n - nodes.data()); }
};

template <typename V>
V Read(const std::string& b, size_t& at) {
  V v;
  std::memcpy(&v, b.data() + at, sizeof v);
  at += sizeof v;
  return v;
}

// A value as text: "i:1", "d:1.5", "s:x", "b:1", "[...]"; nullopt for a null.
std::optional<std::string> ReadValue(const std::string& b, size_t& at) {
  char tag = b[at++];
  switch (tag) {
    case 0:
      return std::nullopt;
    case 1:
      return "b:" + std::to_string(static_cast<int>(b[at++]));
    case 2: {
      char buf[40];
      std::snprintf(buf, sizeof buf, "d:%.17g", Read<double>(b, at));
      return buf;
    }
    case 3: {
      std::string s = b.c_str() + at;
      at += s.size() + 1;
      return "s:" + s;
    }
    case 4:
      return "i:" + std::to_string(Read<int64_t>(b, at));
    case 5: {
      int64_t n = Read<int64_t>(b, at);
      std::string out = "[";
      for (int64_t k = 0; k < n; ++k) out += (k ? "," : "") + ReadValue(b, at).value_or("null");
      return out + "]";
    }
  }
  ADD_FAILURE() << "bad tag " << int(tag);
  at = b.size();
  return std::nullopt;
}

void ReadBlob(const std::string& b, bool nodes, Decoded& g, int64_t& records) {
  size_t at = 0;
  std::string name = b.c_str();
  at += name.size() + 1;
  uint32_t count = Read<uint32_t>(b, at);
  std::vector<std::string> props;
  for (uint32_t i = 0; i < count; ++i) {
    props.emplace_back(b.c_str() + at);
    at += props.back().size() + 1;
  }
  while (at < b.size()) {
    std::map<std::string, std::string> values;
    uint64_t src = 0, dst = 0;
    if (!nodes) {
      src = Read<uint64_t>(b, at);
      dst = Read<uint64_t>(b, at);
    }
    for (const auto& p : props)
      if (auto v = ReadValue(b, at)) values[p] = *v;
    if (nodes)
      g.nodes.push_back({name, values});
    else
      g.edges.push_back({name, src, dst, values});
    ++records;
  }
}

Decoded Decode(const BulkGraph& graph, size_t max_call_bytes) {
  Decoded g;
  bool edges_started = false;
  EXPECT_THAT(graph.ForEachCall(max_call_bytes,
                                [&](BulkCall& call) -> skade::Status {
                                  ++g.calls;
                                  int64_t nodes = 0, edges = 0;
                                  for (const auto& b : call.node_blobs) ReadBlob(b, true, g, nodes);
                                  for (const auto& b : call.edge_blobs) ReadBlob(b, false, g, edges);
                                  EXPECT_EQ(nodes, call.nodes);
                                  EXPECT_EQ(edges, call.edges);
                                  if (edges > 0) edges_started = true;
                                  EXPECT_FALSE(edges_started && nodes > 0)
                                      << "nodes after edges";
                                  return {};
                                }),
              IsOk());
  return g;
}

TEST(BulkGraphTest, VerticesMergeLikeMergeQueries) {
  BulkGraph graph;
  // id 1 twice: the later row wins and its null removes `name`.
  GraphMutation first;
  first.vertices.push_back(Vertices("Person", {"name", "score"},
                                    {T(TypeId::kLong), T(TypeId::kString), T(TypeId::kDouble)},
                                    {Longs({1, 2, 1}), Texts({"Ada", "Bo", std::nullopt}),
                                     Doubles({0.5, std::nullopt, 2.0})}));
  auto r = graph.Add(first);
  ASSERT_THAT(r, IsOk());
  EXPECT_EQ(r->vertex_rows, 3);
  EXPECT_EQ(r->nodes_created, 2);
  // Another table feeds the same label: a new property, one known node, one new.
  GraphMutation second;
  second.vertices.push_back(Vertices("Person", {"level"}, {T(TypeId::kLong), T(TypeId::kLong)},
                                     {Longs({2, 3}), Longs({7, 8})}));
  r = graph.Add(second);
  ASSERT_THAT(r, IsOk());
  EXPECT_EQ(r->nodes_created, 1);
  EXPECT_EQ(graph.NodeCount(), 3);

  Decoded g = Decode(graph, 1 << 20);
  ASSERT_EQ(g.nodes.size(), 3u);
  using Props = std::map<std::string, std::string>;
  EXPECT_EQ(g.Find("Person", "i:1")->props, (Props{{"id", "i:1"}, {"score", "d:2"}}));
  EXPECT_EQ(g.Find("Person", "i:2")->props,
            (Props{{"id", "i:2"}, {"name", "s:Bo"}, {"level", "i:7"}}));
  EXPECT_EQ(g.Find("Person", "i:3")->props, (Props{{"id", "i:3"}, {"level", "i:8"}}));
}

TEST(BulkGraphTest, EdgesCollapseByEndpointsAndKeyAndCreateMissingEndpoints) {
  BulkGraph graph;
  GraphMutation m;
  m.vertices.push_back(Vertices("City", {"name"}, {T(TypeId::kLong), T(TypeId::kString)},
                                {Longs({10, 20}), Texts({"Oslo", "Bergen"})}));
  // Person -> City, keyed by trip id: trips 1 and 2 are parallel; trip 1 comes twice.
  EdgeSet trips{"TRIP", "Person", {"id"}, "City", {"id"}, {"trip"}, {"km"},
                {T(TypeId::kLong), T(TypeId::kLong), T(TypeId::kLong), T(TypeId::kDouble)},
                Rows({Longs({5, 5, 5, 6}), Longs({10, 10, 10, 20}), Longs({1, 2, 1, 3}),
                      Doubles({1.0, 2.0, 9.0, std::nullopt})})};
  m.edges.push_back(trips);
  // Unkeyed: one LIVES_IN per pair however often it comes.
  EdgeSet lives{"LIVES_IN", "Person", {"id"}, "City", {"id"}, {}, {},
                {T(TypeId::kLong), T(TypeId::kLong)}, Rows({Longs({5, 5, 6}), Longs({10, 10, 20})})};
  m.edges.push_back(lives);
  auto r = graph.Add(m);
  ASSERT_THAT(r, IsOk());
  EXPECT_EQ(r->nodes_created, 4);  // two cities, two people known only as endpoints
  EXPECT_EQ(r->relationships_created, 5);
  EXPECT_EQ(r->edge_rows, 7);

  // Tiny calls: every record travels in its own, and nothing changes.
  for (size_t max_call : {size_t{1}, size_t{1} << 20}) {
    Decoded g = Decode(graph, max_call);
    if (max_call == 1) EXPECT_EQ(g.calls, 9);
    ASSERT_EQ(g.nodes.size(), 4u);
    ASSERT_EQ(g.edges.size(), 5u);
    const auto* p5 = g.Find("Person", "i:5");
    const auto* oslo = g.Find("City", "i:10");
    ASSERT_TRUE(p5 && oslo);
    EXPECT_EQ(p5->props.size(), 1u) << "an endpoint-only node has just its key";
    std::map<std::string, std::string> trip1;
    int lives5 = 0;
    for (const auto& e : g.edges) {
      if (e.type == "TRIP" && e.props.at("trip") == "i:1") {
        EXPECT_EQ(e.src, g.IdOf(p5));
        EXPECT_EQ(e.dst, g.IdOf(oslo));
        trip1 = e.props;
      }
      if (e.type == "LIVES_IN" && e.src == g.IdOf(p5)) ++lives5;
      if (e.type == "TRIP" && e.props.at("trip") == "i:3")
        EXPECT_EQ(e.props.count("km"), 0u);
    }
    EXPECT_EQ(trip1.at("km"), "d:9") << "the later row wins";
    EXPECT_EQ(lives5, 1);
  }
}

// Adds vertex sets to a fresh graph.
Result<SinkReport> AddToNewGraph(std::vector<VertexSet> vertices) {
  BulkGraph graph;
  GraphMutation m;
  m.vertices = std::move(vertices);
  return graph.Add(m);
}

TEST(BulkGraphTest, RefusesWhatANewGraphCannotHold) {
  {
    BulkGraph graph;
    GraphMutation m;
    m.vertex_deletes.push_back(Vertices("Person", {}, {T(TypeId::kLong)}, {Longs({1})}));
    EXPECT_THAT(graph.Add(m), IsError(ErrorKind::kUnsupported));
  }
  VertexSet by_email{"Person", {"email"}, {}, {T(TypeId::kString)}, Rows({Texts({"a@b"})})};
  auto r = AddToNewGraph(
      {Vertices("Person", {}, {T(TypeId::kLong)}, {Longs({1})}), std::move(by_email)});
  EXPECT_THAT(r, IsError(ErrorKind::kUnsupported));
  EXPECT_THAT(r.error().message, HasSubstr("label Person is keyed by (id)"));

  r = AddToNewGraph({Vertices("Person", {"score"}, {T(TypeId::kLong), T(TypeId::kDouble)},
                              {Longs({1}), Doubles({std::nan("")})})});
  EXPECT_THAT(r, IsError(ErrorKind::kInvalidArgument));
  EXPECT_THAT(r.error().message, HasSubstr("property 'score' holds NaN"));

  r = AddToNewGraph({Vertices("Person", {"name"}, {T(TypeId::kLong), T(TypeId::kString)},
                              {Longs({1}), Texts({std::string("a\0b", 3)})})});
  EXPECT_THAT(r, IsError(ErrorKind::kInvalidArgument));

  r = AddToNewGraph({Vertices("Person", {}, {T(TypeId::kLong)}, {Longs({std::nullopt})})});
  EXPECT_THAT(r, IsError(ErrorKind::kInvalidArgument));
  EXPECT_THAT(r.error().message, HasSubstr("key 'id' is null"));
}

}  // namespace
}  // namespace bifrost
