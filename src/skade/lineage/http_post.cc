// The OpenLineage sink's HTTP client: libcurl, so https:// and proxies work as
// curl users expect; curl's errors become skade errors here.
#include <curl/curl.h>

#include <mutex>

#include "skade/lineage/http_post_internal.h"

namespace skade::lineage {
namespace {

size_t Discard(char*, size_t size, size_t n, void*) { return size * n; }

void GlobalInit() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

}  // namespace

Result<int> HttpPost(const std::string& url, const std::string& body,
                     const std::vector<std::pair<std::string, std::string>>& headers, int timeout_ms) {
  if (!url.starts_with("http://") && !url.starts_with("https://"))
    return InvalidArgument("lineage endpoint '" + url + "' is not an http:// or https:// URL");
  GlobalInit();
  CURL* curl = curl_easy_init();
  if (!curl) return IoError("cannot start an HTTP client");
  struct curl_slist* list = curl_slist_append(nullptr, "Content-Type: application/json");
  for (const auto& [k, v] : headers) list = curl_slist_append(list, (k + ": " + v).c_str());
  char error[CURL_ERROR_SIZE] = "";
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, list);
  curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.data());
  curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout_ms));
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, Discard);
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error);
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
  CURLcode rc = curl_easy_perform(curl);
  long status = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  curl_slist_free_all(list);
  curl_easy_cleanup(curl);
  if (rc == CURLE_URL_MALFORMAT) return InvalidArgument("lineage endpoint '" + url + "' is not a valid URL");
  if (rc == CURLE_UNSUPPORTED_PROTOCOL) return Unsupported("lineage endpoint '" + url + "': " + error);
  std::string why = error[0] ? std::string(error) : curl_easy_strerror(rc);
  if (rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST) return IoError("cannot connect (" + why + ")");
  if (rc != CURLE_OK) return IoError(why);
  return static_cast<int>(status);
}

}  // namespace skade::lineage
