#include "skade/lineage/lineage_scope.h"

#include <algorithm>

namespace skade::lineage {

CommitInput ToCommitInput(const DatasetRef& ref) {
  return CommitInput{ref.system ? ref.system->kind : std::string(), ref.table, ref.snapshot_id,
                     ref.system ? ref.system->instance : std::string()};
}

DatasetRef ToDatasetRef(const CommitInput& input) {
  DatasetRef ref{input.name, input.snapshot_id, std::nullopt};
  if (!input.system.empty())
    ref.system = SystemRef{input.system, input.instance.empty() ? input.system : input.instance};
  return ref;
}

LineageScope::LineageScope(std::string actor, std::vector<DatasetRef> declared_inputs, Reads reads)
    : actor_(std::move(actor)), reads_(reads), installed_(this) {
  for (const auto& ref : declared_inputs) inputs_.push_back(ToCommitInput(ref));
}

LineageScope::~LineageScope() = default;

void LineageScope::OnRead(const TableIdent& table, std::optional<int64_t> snapshot_id) {
  if (reads_ == Reads::kIgnore) return;
  CommitInput input{"", table.ToString(), snapshot_id, ""};
  std::lock_guard lock(mu_);
  if (std::find(inputs_.begin(), inputs_.end(), input) == inputs_.end()) inputs_.push_back(input);
}

CommitProvenance LineageScope::Provenance() const {
  std::lock_guard lock(mu_);
  return CommitProvenance{actor_, inputs_, ""};
}

}  // namespace skade::lineage
