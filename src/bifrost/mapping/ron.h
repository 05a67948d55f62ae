// RON (Rusty Object Notation) mapping files: a strict reader and a writer for the one
// mapping model. The reader parses RON into a value tree (line:column errors), then
// lowers it onto the YAML node model with every value on its RON line, so the YAML
// validator checks RON files field by field with the same messages and line numbers.
#pragma once

#include <string>

#include "bifrost/mapping/mapping.h"

namespace bifrost::ron {

/// RON text → equivalent YAML (flow style, each value on its RON line). Accepts both
/// this project's spellings and the seed system's: enum variants for steps
/// (`Vertex(...)`, `FkEdges(...)`) and modes (`Cdc`), `Some(x)`/`None`, and a
/// structured filter `(column: "c", eq | in | ge / le: ...)` (lowered to a filter
/// expression). Errors: kInvalidArgument `origin:line:column: what`, also for text
/// nested deeper than MappingSpec::kMaxDepth.
Result<std::string> ToYamlText(const std::string& text, const std::string& origin);

/// The mapping as RON (what `bifrost convert --to ron` prints; ParseRon reads it back).
std::string Write(const MappingSpec& spec);

}  // namespace bifrost::ron
