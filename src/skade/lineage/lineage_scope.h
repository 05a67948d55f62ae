// A LineageScope records every table scanned on its thread while it is open and
// attaches those reads (and its actor and declared inputs) to commits made there.
#pragma once

#include <mutex>
#include <string>
#include <vector>

#include "skade/catalog/catalog.h"
#include "skade/lineage/lineage_event.h"

namespace skade::lineage {

/// Usage: `LineageScope scope("nightly-clean"); scan raw...; append to clean...;`
/// The commit's event then names raw (at the snapshot read) as its input.
/// Not copyable; must be destroyed on the thread that created it.
class LineageScope : public ProvenanceSource {
 public:
  /// Whether tables scanned while the scope is open become inputs (off for a
  /// process-wide scope that only declares an actor and inputs, like the CLI's).
  enum class Reads { kRecord, kIgnore };
  explicit LineageScope(std::string actor, std::vector<DatasetRef> declared_inputs = {},
                        Reads reads = Reads::kRecord);
  ~LineageScope() override;
  LineageScope(const LineageScope&) = delete;
  LineageScope& operator=(const LineageScope&) = delete;

  void OnRead(const TableIdent& table, std::optional<int64_t> snapshot_id) override;
  /// The actor, and the inputs so far: declared ones, then tables read (each table
  /// and snapshot once).
  CommitProvenance Provenance() const override;

 private:
  std::string actor_;
  Reads reads_;
  mutable std::mutex mu_;
  std::vector<CommitInput> inputs_;
  ScopedProvenanceSource installed_;
};

/// Conversions between the catalog's provenance inputs and dataset references.
CommitInput ToCommitInput(const DatasetRef& ref);
DatasetRef ToDatasetRef(const CommitInput& input);

}  // namespace skade::lineage
