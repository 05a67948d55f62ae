// skade's HTTP client: libcurl, so https:// and proxies work as curl users expect;
// curl's errors become skade errors here. libcurl is loaded on the first request
// (curl_loader_internal.h says why).
#include <cctype>

#include "skade/lineage/curl_loader_internal.h"
#include "skade/lineage/http_post_internal.h"

namespace skade::lineage {
namespace {

size_t Discard(char*, size_t size, size_t n, void*) { return size * n; }

struct Sink {
  std::string* body;
  size_t max;
  bool overflow = false;
};

size_t Keep(char* data, size_t size, size_t n, void* user) {
  auto* sink = static_cast<Sink*>(user);
  if (sink->body->size() + size * n > sink->max) {
    sink->overflow = true;
    return 0;  // curl then fails the transfer
  }
  sink->body->append(data, size * n);
  return size * n;
}

// One request: a POST of `post` when given, else a GET; the answer's body into `reply`
// when given. `what` names the URL in errors ("lineage endpoint", "REST catalog").
// `stop_fd`, when readable, abandons the request.
Result<int> Perform(const std::string& url, const std::string* post, const HttpHeaders& headers,
                    int timeout_ms, std::string* reply, size_t max_body, const std::string& what,
                    int stop_fd = -1) {
  if (!url.starts_with("http://") && !url.starts_with("https://"))
    return InvalidArgument(what + " '" + url + "' is not an http:// or https:// URL");
  SKADE_ASSIGN_OR_RETURN(const CurlApi* api, Curl());
  const CurlApi& c = *api;
  CURL* curl = c.easy_init();
  if (!curl) return IoError("cannot start an HTTP client");
  struct curl_slist* list =
      post ? c.slist_append(nullptr, "Content-Type: application/json") : nullptr;
  for (const auto& [k, v] : headers) list = c.slist_append(list, (k + ": " + v).c_str());
  char error[CURL_ERROR_SIZE] = "";
  Sink sink{reply, max_body};
  c.easy_setopt(curl, CURLOPT_URL, url.c_str());
  c.easy_setopt(curl, CURLOPT_HTTPHEADER, list);
  if (post) {
    c.easy_setopt(curl, CURLOPT_POSTFIELDS, post->data());
    c.easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(post->size()));
  }
  c.easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout_ms));
  c.easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  if (reply) {
    c.easy_setopt(curl, CURLOPT_WRITEFUNCTION, Keep);
    c.easy_setopt(curl, CURLOPT_WRITEDATA, &sink);
    c.easy_setopt(curl, CURLOPT_ACCEPT_ENCODING, "");  // whatever curl can decode
  } else {
    c.easy_setopt(curl, CURLOPT_WRITEFUNCTION, Discard);
  }
  c.easy_setopt(curl, CURLOPT_ERRORBUFFER, error);
  c.easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
  // The multi interface, to wait on the stop fd beside the transfer.
  CURLM* multi = c.multi_init();
  c.multi_add_handle(multi, curl);
  CURLcode rc = CURLE_OK;
  bool stopped = false;
  for (int running = 1; running;) {
    if (c.multi_perform(multi, &running) != CURLM_OK) {
      rc = CURLE_FAILED_INIT;
      break;
    }
    if (!running) break;
    curl_waitfd stop{stop_fd, CURL_WAIT_POLLIN, 0};
    c.multi_poll(multi, stop_fd >= 0 ? &stop : nullptr, stop_fd >= 0 ? 1 : 0, 1000, nullptr);
    if (stop_fd >= 0 && stop.revents != 0) {
      stopped = true;
      break;
    }
  }
  int left = 0;
  while (CURLMsg* msg = c.multi_info_read(multi, &left))
    if (msg->msg == CURLMSG_DONE) rc = msg->data.result;
  c.multi_remove_handle(multi, curl);
  c.multi_cleanup(multi);
  long status = 0;
  c.easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  c.slist_free_all(list);
  c.easy_cleanup(curl);
  if (stopped) return IoError(what + " '" + url + "': interrupted");
  if (rc == CURLE_URL_MALFORMAT) return InvalidArgument(what + " '" + url + "' is not a valid URL");
  if (rc == CURLE_UNSUPPORTED_PROTOCOL) return Unsupported(what + " '" + url + "': " + error);
  if (rc == CURLE_WRITE_ERROR && sink.overflow)
    return IoError("the answer from " + url + " is larger than " + std::to_string(max_body) + " bytes");
  std::string why = error[0] ? std::string(error) : c.easy_strerror(rc);
  if (rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST) return IoError("cannot connect (" + why + ")");
  if (rc != CURLE_OK) return IoError(why);
  return static_cast<int>(status);
}

}  // namespace

Result<int> HttpPost(const std::string& url, const std::string& body, const HttpHeaders& headers,
                     int timeout_ms) {
  return Perform(url, &body, headers, timeout_ms, nullptr, 0, "lineage endpoint");
}

Result<HttpReply> HttpGet(const std::string& url, const HttpHeaders& headers, int timeout_ms,
                          size_t max_body) {
  HttpReply reply;
  SKADE_ASSIGN_OR_RETURN(reply.status,
                         Perform(url, nullptr, headers, timeout_ms, &reply.body, max_body, "URL"));
  return reply;
}

std::string UrlEncode(std::string_view s) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

Result<HttpReply> HttpRequest(const HttpCall& call) {
  if (call.method != "GET" && call.method != "POST")
    return Unsupported("HTTP method " + call.method + " (GET or POST)");
  HttpReply reply;
  SKADE_ASSIGN_OR_RETURN(reply.status,
                         Perform(call.url, call.method == "POST" ? &call.body : nullptr, call.headers,
                                 call.timeout_ms, &reply.body, size_t{64} << 20, call.what,
                                 call.stop_fd));
  return reply;
}

}  // namespace skade::lineage
