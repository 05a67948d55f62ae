// The mapping file: which tables become which vertices and edges. Parsed from YAML,
// then compiled against each table's real schema (see compiled_mapping.h).
#pragma once

#include <map>
#include <string>
#include <variant>
#include <vector>

#include "skade/common/result.h"

namespace bifrost {

using skade::Result;
using skade::Status;

enum class SyncMode { kFull, kIncremental, kCdc };
std::string_view SyncModeName(SyncMode mode);

/// One end of an edge: the row's columns that hold the endpoint's key, and the label
/// of the vertex they name. `keys` are the key properties on that vertex; empty means
/// "the id properties of the vertex step with that label" (resolved at compile).
struct EndpointSpec {
  std::string label;
  std::vector<std::string> columns;
  std::vector<std::string> keys;
};

/// One row → one vertex, MERGEd on its id properties.
struct VertexStep {
  std::string label;
  std::vector<std::string> id_columns;
  std::vector<std::string> properties;
  std::map<std::string, std::string> rename;  // column → property name
};

/// One row → one relationship between two MERGEd endpoints. `fk` marks an `fk_edges`
/// step (endpoints owned by other tables); `key_columns` tell parallel edges of the
/// same type between the same endpoints apart.
struct EdgeStep {
  std::string type;
  EndpointSpec src;
  EndpointSpec dst;
  std::vector<std::string> key_columns;
  std::vector<std::string> properties;
  std::map<std::string, std::string> rename;
  bool fk = false;
};

/// A transform looked up by name in the TransformRegistry, or, with a `runner`, one
/// run out of process (an Arrow Flight service, a WASM guest): it is given `columns`
/// (empty: every column read), must reply with rows of the declared `schema`, and
/// its reply becomes the vertex and edge sets of `output_vertices` / `output_edges`.
struct CustomStep {
  std::string name;
  std::string runner;                           // "" (registered), "flight", "wasm"
  std::map<std::string, std::string> settings;  // the runner's, checked when compiled
  std::vector<std::string> columns;
  std::string schema;  // the reply's columns, in the CLI schema language
  std::vector<VertexStep> output_vertices;
  std::vector<EdgeStep> output_edges;
};

using PipelineStep = std::variant<VertexStep, EdgeStep, CustomStep>;

struct TableMapping {
  std::string table;   // namespace.name
  std::string source;  // empty: the skade warehouse; "parquet:DIR": the drop folder DIR/<table>/;
                       // "rest:http://HOST:PORT[?warehouse=W]": an Iceberg REST catalog;
                       // "spark:sc://HOST:PORT": read through a Spark Connect server
  std::string token_file;  // rest: a file holding the catalog's bearer token
  SyncMode mode = SyncMode::kFull;
  std::vector<std::string> columns;  // overrides the derived projection
  std::string filter;                // skade filter expression, pushed down
  std::vector<PipelineStep> pipeline;
  bool allow_empty = false;  // accept a first read with no rows
  bool prune = false;        // full mode: remove what the table no longer produces
  int line = 0;              // where the entry starts in the file (for errors)
};

struct MappingSpec {
  /// How deep collections may nest in a mapping file (flow brackets and block
  /// indentation alike; the top-level map is level 1). Checked on the raw text before
  /// the YAML parser, which recurses per level, sees it.
  static constexpr int kMaxDepth = 64;

  std::string graph;
  std::vector<TableMapping> tables;

  /// Parses the YAML text; `origin` names the file in errors. Reports every problem
  /// found (unknown keys, missing fields, wrong shapes), one per line, with line numbers.
  /// Errors: kInvalidArgument (also for text nested deeper than kMaxDepth, alone).
  static Result<MappingSpec> Parse(const std::string& text, const std::string& origin);
  /// Parses RON text (see ron.h): the same fields, checked with the same messages.
  /// Errors: kInvalidArgument `origin:line:column: what` for bad RON, else Parse's.
  static Result<MappingSpec> ParseRon(const std::string& text, const std::string& origin);
  /// Reads and parses a file, as RON when its name ends in `.ron`, else as YAML.
  /// Errors: kNotFound / kIoError naming the file, or Parse's / ParseRon's.
  static Result<MappingSpec> Load(const std::string& path);
  /// The mapping as YAML (what `bifrost infer` prints and Parse reads back).
  std::string ToYaml() const;
  /// The mapping as RON (ParseRon reads it back to the same mapping).
  std::string ToRon() const;
};

}  // namespace bifrost
