// read_delta: the rows of data files appended between two snapshots, and a plan
// that says whether a delta can describe the change at all.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "skade/common/result.h"
#include "skade/format/manifest.h"

namespace arrow {
class Table;
}

namespace skade {
class Table;
}

namespace skade::cdc {

struct DeltaPlan {
  std::vector<int64_t> snapshots;      // after `from` up to `to`, oldest first
  std::vector<DataFile> added_files;   // data files added and still live at `to`
  std::vector<DataFile> delete_files;  // delete files added in the range
  /// True when the range removed rows (delete files, removed data files,
  /// overwrites): appended rows alone do not describe it; use read_changelog or
  /// reload. Compaction (`replace`) does not count.
  bool needs_full_reload = false;
};

/// Plans the delta between `from` (exclusive; nullopt = creation) and `to`
/// (inclusive; nullopt = current). Errors: kNotFound when `from` is not an ancestor.
Result<DeltaPlan> PlanDelta(const Table& table, std::optional<int64_t> from,
                            std::optional<int64_t> to);

/// The rows of the plan's added files (their deletes applied as of `to`).
Result<std::shared_ptr<arrow::Table>> ReadDelta(const Table& table, std::optional<int64_t> from,
                                                std::optional<int64_t> to,
                                                DeltaPlan* plan = nullptr);

}  // namespace skade::cdc
