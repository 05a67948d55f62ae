// skade's HTTP client: libcurl, so https:// and proxies work as curl users expect;
// curl's errors become skade errors here.
#include <curl/curl.h>

#include <mutex>

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

void GlobalInit() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

// One request: a POST of `post` when given, else a GET; the answer's body into `reply`
// when given. `what` names the URL in errors ("lineage endpoint", "REST catalog").
Result<int> Perform(const std::string& url, const std::string* post, const HttpHeaders& headers,
                    int timeout_ms, std::string* reply, size_t max_body, const std::string& what) {
  if (!url.starts_with("http://") && !url.starts_with("https://"))
    return InvalidArgument(what + " '" + url + "' is not an http:// or https:// URL");
  GlobalInit();
  CURL* curl = curl_easy_init();
  if (!curl) return IoError("cannot start an HTTP client");
  struct curl_slist* list =
      post ? curl_slist_append(nullptr, "Content-Type: application/json") : nullptr;
  for (const auto& [k, v] : headers) list = curl_slist_append(list, (k + ": " + v).c_str());
  char error[CURL_ERROR_SIZE] = "";
  Sink sink{reply, max_body};
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, list);
  if (post) {
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, post->data());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(post->size()));
  }
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout_ms));
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  if (reply) {
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, Keep);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &sink);
    curl_easy_setopt(curl, CURLOPT_ACCEPT_ENCODING, "");  // whatever curl can decode
  } else {
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, Discard);
  }
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error);
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
  CURLcode rc = curl_easy_perform(curl);
  long status = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  curl_slist_free_all(list);
  curl_easy_cleanup(curl);
  if (rc == CURLE_URL_MALFORMAT) return InvalidArgument(what + " '" + url + "' is not a valid URL");
  if (rc == CURLE_UNSUPPORTED_PROTOCOL) return Unsupported(what + " '" + url + "': " + error);
  if (rc == CURLE_WRITE_ERROR && sink.overflow)
    return IoError("the answer from " + url + " is larger than " + std::to_string(max_body) + " bytes");
  std::string why = error[0] ? std::string(error) : curl_easy_strerror(rc);
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

}  // namespace skade::lineage
