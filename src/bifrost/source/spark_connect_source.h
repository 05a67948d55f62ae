// A Spark Connect server as a table source (`source: spark:sc://HOST:PORT`): tables are
// read through Spark (gRPC, the Spark Connect protocol), with the mapping's projection and
// filter in the plan sent, and the Arrow IPC batches of the answer handed on as they are.
// gRPC and protobuf stay in the .cc: this header is included by the CLI's session.
#pragma once

#include <memory>
#include <string>

#include "bifrost/source/table_source.h"

namespace bifrost {

/// Reads tables through a Spark Connect server whose session catalog holds them as
/// Iceberg tables (the mapping's `table` is what Spark resolves). The cursor is the
/// table's `main` snapshot (from its `refs` metadata table):
/// * full: the snapshot the cursor moved to, read with Iceberg's `snapshot-id` option;
/// * incremental: Iceberg's append scan (`start-snapshot-id`, `end-snapshot-id`) when
///   every snapshot since the cursor is an append, a full rescan otherwise;
/// * cdc: Iceberg's `create_changelog_view` between the cursor and the current snapshot.
/// The first round of incremental and cdc is a full read. Projection and filter go into
/// the plan (a Project over a Filter over the table's Read).
class SparkConnectSource : public TableSource {
 public:
  /// `url` is `sc://HOST:PORT` (no connection is made until the first read).
  /// Errors: kInvalidArgument naming the url.
  static Result<std::unique_ptr<SparkConnectSource>> Open(const std::string& url);
  ~SparkConnectSource() override;

  /// Errors: kIoError naming the server when it cannot be reached or fails a query;
  /// kNotFound for a missing table or expired cursor; kUnsupported for a cdc cursor
  /// the table was rolled back past.
  Result<std::optional<Fetched>> FetchNew(const CompiledTable& table,
                                          const TableState& state) override;

  /// The table's schema as Spark reports it (for compiling the mapping).
  Result<std::shared_ptr<const skade::Schema>> SchemaOf(const std::string& table);
  const std::string& url() const;

 private:
  struct Impl;
  explicit SparkConnectSource(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// A skade row filter (expression.h) as a Spark SQL condition: columns quoted with
/// backticks, strings with ''-escaping. Errors: Parse's, for a filter that is not valid.
Result<std::string> SparkSqlFilter(const std::string& filter);

}  // namespace bifrost
