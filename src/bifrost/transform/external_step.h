// Custom steps run out of process: the rows go to a runner (an Arrow Flight service, a
// WASM guest), its reply is checked against the step's declared schema and then mapped
// by the step's output steps as if it were a table of its own. Included by the
// transform code only (it names Arrow types).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "bifrost/transform/transform.h"

namespace arrow {
class Schema;
}

namespace bifrost {

/// Sends rows to where a custom step runs and returns the reply (any schema; the
/// caller checks it). Errors name the step and what failed; kIoError when the peer
/// could not be reached or died, kInvalidArgument for a reply that cannot be read.
class RowRunner {
 public:
  virtual ~RowRunner() = default;
  virtual Result<std::shared_ptr<arrow::Table>> Run(const std::shared_ptr<arrow::Table>& rows) = 0;
};

/// A step's runner settings, read with their defaults and bounds; whatever is wrong
/// (unknown keys, bad numbers) is collected for the compile report.
class StepSettings {
 public:
  explicit StepSettings(const CustomStep& step) : step_(step) {}
  std::string String(const std::string& key, const std::string& fallback, bool required = false);
  int64_t Int(const std::string& key, int64_t fallback, int64_t min, int64_t max);
  void Problem(std::string what) { problems_.push_back(std::move(what)); }
  /// kInvalidArgument listing the problems found, unknown keys included.
  Status Check() const;

 private:
  const CustomStep& step_;
  std::set<std::string> known_;
  std::vector<std::string> problems_;
};

/// The runners. Settings are checked here; Flight contacts nothing until the first
/// round, WASM reads and compiles its module now.
Result<std::unique_ptr<RowRunner>> MakeFlightRunner(const CustomStep& step);
Result<std::unique_ptr<RowRunner>> MakeWasmRunner(const CustomStep& step);

/// A custom step with a runner: selects its columns, runs them, checks the reply's
/// schema (names and types exactly, no nulls in required columns) and applies
/// `output` (compiled against the declared schema) to the reply.
class ExternalStep : public Transform {
 public:
  ExternalStep(std::string name, std::vector<std::string> columns,
               std::shared_ptr<arrow::Schema> declared, std::unique_ptr<RowRunner> runner,
               CompiledTable output);
  Result<GraphMutation> Apply(const TransformContext& ctx,
                              const std::shared_ptr<arrow::Table>& rows) const override;

 private:
  std::string name_;
  std::vector<std::string> columns_;
  std::shared_ptr<arrow::Schema> declared_;
  std::unique_ptr<RowRunner> runner_;  // stateful (a connection, a compiled module)
  CompiledTable output_;
};

/// The runner for `step.runner` ("flight" or "wasm"); kInvalidArgument otherwise.
Result<std::unique_ptr<RowRunner>> MakeRowRunner(const CustomStep& step);

}  // namespace bifrost
