#include "bifrost/mutation.h"

#include <arrow/table.h>

namespace bifrost {
namespace {
template <typename Set>
int64_t Rows(const std::vector<Set>& sets) {
  int64_t n = 0;
  for (const auto& s : sets) n += s.rows ? s.rows->num_rows() : 0;
  return n;
}
template <typename Set>
void Append(std::vector<Set>& to, std::vector<Set>& from) {
  for (auto& s : from) to.push_back(std::move(s));
}
}  // namespace

void GraphMutation::Merge(GraphMutation other) {
  Append(vertices, other.vertices);
  Append(edges, other.edges);
  Append(edge_deletes, other.edge_deletes);
  Append(vertex_deletes, other.vertex_deletes);
}
int64_t GraphMutation::VertexRows() const { return Rows(vertices); }
int64_t GraphMutation::EdgeRows() const { return Rows(edges); }
int64_t GraphMutation::DeleteRows() const { return Rows(edge_deletes) + Rows(vertex_deletes); }

}  // namespace bifrost
