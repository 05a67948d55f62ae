// What a namespace or table name may be. Every entry that creates or renames
// (CLI, C++ API, REST) checks here, because names become folder names.
#pragma once

#include <cstddef>
#include <string_view>

#include "skade/common/result.h"

namespace skade {

/// A table name, and a namespace as a whole, are at most this many bytes: the folder
/// made of one gets ".db" or a "-<uuid>" suffix and must stay a valid file name.
inline constexpr size_t kMaxNameBytes = 200;

/// A name part is non-empty valid UTF-8 without control characters, '/' or '\'.
/// A namespace is parts joined by '.'; it may not be `catalog` (its folder would be
/// the catalog file). A table name is one part (no '.').
/// Errors: kInvalidArgument saying which rule the name breaks.
Status ValidateNamespaceName(std::string_view ns);
Status ValidateTableName(std::string_view name);

}  // namespace skade
