#include "skade/lineage/curl_loader_internal.h"

#include <dlfcn.h>

namespace skade::lineage {
namespace {

template <typename F>
bool Resolve(void* lib, const char* name, F*& fn) {
  fn = reinterpret_cast<F*>(::dlsym(lib, name));
  return fn != nullptr;
}

}  // namespace

Result<CurlApi> LoadCurlApi(const char* soname) {
  // Cleared first: dlerror() may hold an earlier, unrelated failure.
  (void)::dlerror();
  void* lib = ::dlopen(soname, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* why = ::dlerror();
    return Unsupported(std::string("HTTP needs libcurl, and ") + soname + " cannot be loaded (" +
                       (why ? why : "not found") + "); install libcurl4");
  }
  CurlApi api{};
  const char* missing = nullptr;
  auto need = [&](const char* name, auto*& fn) {
    if (!missing && !Resolve(lib, name, fn)) missing = name;
  };
  need("curl_global_init", api.global_init);
  need("curl_easy_init", api.easy_init);
  need("curl_easy_setopt", api.easy_setopt);
  need("curl_easy_getinfo", api.easy_getinfo);
  need("curl_easy_strerror", api.easy_strerror);
  need("curl_easy_cleanup", api.easy_cleanup);
  need("curl_slist_append", api.slist_append);
  need("curl_slist_free_all", api.slist_free_all);
  need("curl_multi_init", api.multi_init);
  need("curl_multi_add_handle", api.multi_add_handle);
  need("curl_multi_remove_handle", api.multi_remove_handle);
  need("curl_multi_perform", api.multi_perform);
  need("curl_multi_poll", api.multi_poll);
  need("curl_multi_info_read", api.multi_info_read);
  need("curl_multi_cleanup", api.multi_cleanup);
  if (missing)
    return Unsupported(std::string("HTTP needs libcurl 7.66 or later, and ") + soname + " has no " +
                       missing);
  return api;
}

Result<const CurlApi*> Curl() {
  // A function-local static: initialised once, thread-safe, and a failure stays the answer.
  static const Result<CurlApi> api = [] {
    auto loaded = LoadCurlApi("libcurl.so.4");
    if (loaded) loaded->global_init(CURL_GLOBAL_DEFAULT);
    return loaded;
  }();
  if (!api) return std::unexpected(api.error());
  return &*api;
}

}  // namespace skade::lineage
