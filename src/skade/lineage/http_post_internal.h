// A minimal HTTP/1.1 POST over a plain socket (no TLS) for the OpenLineage sink.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "skade/common/result.h"

namespace skade::lineage {

/// POSTs `body` to `url` (`http://host[:port]/path`) and returns the status code.
/// Errors: kUnsupported for https or another scheme; kInvalidArgument for a malformed
/// URL; kIoError (naming host and port) when the connection fails or times out.
Result<int> HttpPost(const std::string& url, const std::string& body,
                     const std::vector<std::pair<std::string, std::string>>& headers, int timeout_ms);

}  // namespace skade::lineage
