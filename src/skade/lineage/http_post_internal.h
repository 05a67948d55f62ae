// skade's HTTP client (libcurl): POSTs for the OpenLineage sink, GETs for Bifröst's
// REST catalog source, both for Bifröst's Airflow events.
#pragma once

#include <string>
#include <string_view>
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

/// `s` for a URL's path segment or query value: RFC 3986 unreserved characters stay,
/// everything else is %XX.
std::string UrlEncode(std::string_view s);

/// A GET or POST whose wait can be cut short.
struct HttpCall {
  std::string method = "POST";  // GET or POST
  std::string url;              // http:// or https://
  std::string body;             // POSTed as JSON
  HttpHeaders headers;
  int timeout_ms = 5000;
  std::string what = "URL";  // names the URL in errors
  int stop_fd = -1;          // when readable, the request is abandoned (kIoError "interrupted")
};

/// Sends `call`: the status and body of the answer, whatever the status. Errors: as
/// HttpGet's (answers past 64 MiB), and kIoError "interrupted" after the stop fd.
Result<HttpReply> HttpRequest(const HttpCall& call);

}  // namespace skade::lineage
