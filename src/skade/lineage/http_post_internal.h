// skade's HTTP client (libcurl): POSTs for the OpenLineage sink, GETs for Bifröst's
// REST catalog source.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "skade/common/result.h"

namespace skade::lineage {

using HttpHeaders = std::vector<std::pair<std::string, std::string>>;

/// POSTs `body` as JSON to `url` (`http://` or `https://`) and returns the status code.
/// Errors: kInvalidArgument for another scheme or a malformed URL; kIoError (curl's
/// reason, naming the host) when the connection fails or times out.
Result<int> HttpPost(const std::string& url, const std::string& body, const HttpHeaders& headers,
                     int timeout_ms);

struct HttpReply {
  int status = 0;
  std::string body;
};

/// GETs `url`: the status and body of the answer (bodies past `max_body` bytes are an
/// error). Errors: as HttpPost's, and kIoError for a body past `max_body`.
Result<HttpReply> HttpGet(const std::string& url, const HttpHeaders& headers, int timeout_ms,
                          size_t max_body = size_t{256} << 20);

}  // namespace skade::lineage
