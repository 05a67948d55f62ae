// An HTTP(S) POST for the OpenLineage sink (libcurl).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "skade/common/result.h"

namespace skade::lineage {

/// POSTs `body` as JSON to `url` (`http://` or `https://`) and returns the status code.
/// Errors: kInvalidArgument for another scheme or a malformed URL; kIoError (curl's
/// reason, naming the host) when the connection fails or times out.
Result<int> HttpPost(const std::string& url, const std::string& body,
                     const std::vector<std::pair<std::string, std::string>>& headers, int timeout_ms);

}  // namespace skade::lineage
