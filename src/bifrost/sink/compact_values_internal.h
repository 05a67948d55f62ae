// FalkorDB's compact result values ([type, value] cells) as JSON. Internal to the sink.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bifrost/sink/resp_reply.h"

namespace bifrost {

/// A graph's label, relationship-type and property-key names, by id (the order of
/// `CALL db.labels()`, `db.relationshipTypes()`, `db.propertyKeys()`).
struct GraphNames {
  std::vector<std::string> labels, types, keys;
};

/// Whether any cell of `rows` holds a node, edge or path (which need GraphNames).
bool HoldsEntities(const Reply& rows);

/// One cell as JSON: scalars native (doubles parsed, booleans as such), lists and maps
/// recursively; a node {"id","labels","properties"}, an edge {"id","type","src","dst",
/// "properties"}, a path {"nodes","edges"}, a point {"latitude","longitude"}; temporal
/// values as the server's integers (epoch seconds). A name missing from `names` is
/// written as "#<id>".
nlohmann::ordered_json DecodeCell(const Reply& cell, const GraphNames& names = {});

}  // namespace bifrost
