// What FalkorDB can hold as a property value, in one place for both encoders (the
// Cypher literals of MERGE queries and the binary records of GRAPH.BULK), so a value
// one path refuses the other refuses too, with the same words.
#pragma once

#include <string>
#include <string_view>

#include "skade/common/result.h"
#include "skade/format/types.h"

namespace bifrost {

/// Whether a column of `type` can be a property: primitives but binary and fixed, and
/// lists of those.
bool IsStorableProperty(const skade::Type& type);
/// Whether it can be a vertex or edge key: such a primitive, but not a float.
bool IsStorableKey(const skade::Type& type);

/// kInvalidArgument naming the property when a column of `type` has no FalkorDB form:
/// binary, fixed, struct, map, and lists of anything but primitives that have one.
skade::Status CheckStorableType(const skade::Type& type, const std::string& name);
/// NaN and the infinities have no FalkorDB form.
skade::Status CheckStorableDouble(double d, const std::string& name);
/// A NUL byte ends a string on the server (and breaks the query text).
skade::Status CheckStorableText(std::string_view s, const std::string& name);
/// Lists cannot hold nulls.
skade::Status NullListElement(const std::string& name);

}  // namespace bifrost
