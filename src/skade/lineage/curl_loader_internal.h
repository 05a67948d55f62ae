// libcurl, loaded on the first HTTP request rather than linked: its TLS, Kerberos, LDAP and
// SSH chains are ~30 libraries that every skade and bifrost process would otherwise map and
// relocate at start, though only a few commands ever send HTTP. Types and constants come
// from <curl/curl.h> (include it where the table is used); no function of it is linked.
#pragma once

#include <curl/curl.h>

#include "skade/common/result.h"

namespace skade::lineage {

/// The libcurl functions skade calls, resolved from one loaded library.
struct CurlApi {
  CURLcode (*global_init)(long flags);
  CURL* (*easy_init)();
  CURLcode (*easy_setopt)(CURL*, CURLoption, ...);
  CURLcode (*easy_getinfo)(CURL*, CURLINFO, ...);
  const char* (*easy_strerror)(CURLcode);
  void (*easy_cleanup)(CURL*);
  curl_slist* (*slist_append)(curl_slist*, const char*);
  void (*slist_free_all)(curl_slist*);
  CURLM* (*multi_init)();
  CURLMcode (*multi_add_handle)(CURLM*, CURL*);
  CURLMcode (*multi_remove_handle)(CURLM*, CURL*);
  CURLMcode (*multi_perform)(CURLM*, int*);
  CURLMcode (*multi_poll)(CURLM*, curl_waitfd*, unsigned, int, int*);
  CURLMsg* (*multi_info_read)(CURLM*, int*);
  CURLMcode (*multi_cleanup)(CURLM*);
};

/// libcurl (`libcurl.so.4`), loaded and initialised (`curl_global_init`) on the first call,
/// once per process; thread-safe. Errors: kUnsupported naming the library and the loader's
/// reason when it is missing or lacks a function (the same error on every later call).
Result<const CurlApi*> Curl();

/// The table resolved from the library `soname` (loaded, never unloaded; not initialised).
/// Errors: as Curl()'s. For Curl() and its tests.
Result<CurlApi> LoadCurlApi(const char* soname);

}  // namespace skade::lineage
