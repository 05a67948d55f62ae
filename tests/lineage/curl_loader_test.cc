// libcurl is loaded on the first HTTP request: a missing library or one without curl's
// functions is a clear error naming it; the real one resolves and answers.
#include "skade/lineage/curl_loader_internal.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testing/matchers.h"

namespace skade::lineage {
namespace {

using skade::testing::IsErrorWith;
using skade::testing::IsOk;

TEST(CurlLoaderTest, MissingLibraryIsAnErrorNamingIt) {
  EXPECT_THAT(LoadCurlApi("libcurl-not-installed.so.4"),
              IsErrorWith(ErrorKind::kUnsupported, "libcurl-not-installed.so.4 cannot be loaded"));
}

TEST(CurlLoaderTest, LibraryWithoutCurlFunctionsIsAnErrorNamingTheFunction) {
  // zlib is always there (skade links it) and has none of curl's functions.
  EXPECT_THAT(LoadCurlApi("libz.so.1"),
              IsErrorWith(ErrorKind::kUnsupported, "libz.so.1 has no curl_global_init"));
}

TEST(CurlLoaderTest, TheInstalledLibcurlResolvesOnceAndWorks) {
  auto first = Curl();
  ASSERT_THAT(first, IsOk());
  auto again = Curl();
  ASSERT_THAT(again, IsOk());
  EXPECT_EQ(*first, *again);
  EXPECT_STREQ((*first)->easy_strerror(CURLE_COULDNT_CONNECT), "Couldn't connect to server");
  CURL* handle = (*first)->easy_init();
  ASSERT_NE(handle, nullptr);
  (*first)->easy_cleanup(handle);
}

}  // namespace
}  // namespace skade::lineage
