// The Iceberg REST catalog source: tables of any REST catalog (`skade serve`, the
// Iceberg reference server, ...) read in full, incremental and cdc modes.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "bifrost/source/table_source.h"

namespace bifrost {

/// Metadata comes over REST (`GET /v1/config` once, then `loadTable` each round); the
/// manifests and data files are read through skade's FileIO from the locations the
/// metadata names, and the rows since the cursor are found by the same code as the
/// warehouse source's (FetchFromTable: scan with projection and filter pushed down,
/// read_delta, skade's changelog). Not thread-safe.
class RestCatalogSource : public TableSource {
 public:
  /// `uri` is `http[s]://HOST:PORT[/PATH][?warehouse=W]` (a mapping's source without
  /// `rest:`); `token` (may be empty) goes as `Authorization: Bearer`.
  /// Errors: kInvalidArgument for another form; kIoError when the scratch catalog that
  /// holds the FileIO cannot be made.
  static Result<std::unique_ptr<RestCatalogSource>> Make(const std::string& uri, std::string token);
  ~RestCatalogSource() override;

  /// Errors: kIoError when the catalog cannot be reached or answers 5xx; kCorrupt for
  /// an answer that is not the REST spec's JSON; kNotFound for a table it does not hold
  /// (naming the tables of that namespace); kInvalidArgument when it refuses the token.
  Result<std::optional<Fetched>> FetchNew(const CompiledTable& table,
                                          const TableState& state) override;
  /// The table's current schema, for CompileMapping. Errors: as FetchNew's.
  Result<std::shared_ptr<const skade::Schema>> SchemaOf(const skade::TableIdent& ident);

 private:
  struct State;
  explicit RestCatalogSource(std::unique_ptr<State> state);
  std::unique_ptr<State> s_;
};

/// The REST sources of a mapping: one per catalog URI and token file, made on first use.
class RestSources {
 public:
  /// The source of a table whose mapping names `rest:URI` (and maybe a token_file).
  /// Errors: Make's; kInvalidArgument naming a token file that cannot be read or is empty.
  Result<RestCatalogSource*> For(const TableMapping& table);

 private:
  std::map<std::pair<std::string, std::string>, std::unique_ptr<RestCatalogSource>> sources_;
};

}  // namespace bifrost
