#include "skade/table/data_file_sink.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "testing/temp_dir.h"

namespace skade {
namespace {

std::string Contents(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

// Whether this folder's file system takes O_DIRECT at open (tmpfs before Linux 6.6 does not).
bool TakesDirect(const std::string& dir) {
  std::string probe = dir + "/probe";
  int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_DIRECT, 0644);
  if (fd >= 0) ::close(fd);
  ::unlink(probe.c_str());
  return fd >= 0;
}

// Writes of every awkward size (single bytes, a sector less one, exact sectors, more than
// the staging buffer at once, and a tail that fills no sector) reach the file in order.
TEST(DataFileSinkTest, TheFileHoldsEveryByteInOrderWhateverTheWriteSizes) {
  testing::TempDir dir;
  std::string path = dir.path() + "/f.parquet";
  auto sink = DataFileSink::Open(path).ValueOrDie();
  EXPECT_EQ(sink->direct(), TakesDirect(dir.path()));

  std::mt19937 rng(7);
  std::string expected;
  for (size_t n : {1u, 4095u, 4096u, 1u, (1u << 20) - 3, 3u << 20, 17u, 8192u, 100000u, 5u}) {
    std::string piece(n, '\0');
    for (char& c : piece) c = static_cast<char>(rng());
    ASSERT_TRUE(sink->Write(piece.data(), static_cast<int64_t>(n)).ok());
    expected += piece;
    EXPECT_EQ(sink->Tell().ValueOrDie(), static_cast<int64_t>(expected.size()));
  }
  ASSERT_TRUE(sink->Finish().ok());
  ASSERT_EQ(::fsync(sink->file_descriptor()), 0);
  ASSERT_TRUE(sink->Close().ok());
  EXPECT_TRUE(sink->closed());
  EXPECT_EQ(Contents(path), expected);
}

TEST(DataFileSinkTest, AnEmptyFileAndAWholeSectorFileFinish) {
  testing::TempDir dir;
  auto empty = DataFileSink::Open(dir.path() + "/empty").ValueOrDie();
  ASSERT_TRUE(empty->Finish().ok());
  ASSERT_TRUE(empty->Close().ok());
  EXPECT_EQ(Contents(dir.path() + "/empty"), "");

  auto sector = DataFileSink::Open(dir.path() + "/sector").ValueOrDie();
  std::string bytes(2 * 4096, 'x');
  ASSERT_TRUE(sector->Write(bytes.data(), static_cast<int64_t>(bytes.size())).ok());
  ASSERT_TRUE(sector->Finish().ok());
  EXPECT_EQ(sector->direct(), TakesDirect(dir.path()));  // no tail: it never had to go buffered
  ASSERT_TRUE(sector->Close().ok());
  EXPECT_EQ(Contents(dir.path() + "/sector"), bytes);
}

TEST(DataFileSinkTest, ErrorsGiveTheReason) {
  testing::TempDir dir;
  auto opened = DataFileSink::Open(dir.path() + "/no-such-folder/f.parquet");
  ASSERT_FALSE(opened.ok());
  EXPECT_NE(opened.status().message().find("No such file or directory"), std::string::npos)
      << opened.status().ToString();

  auto sink = DataFileSink::Open(dir.path() + "/f").ValueOrDie();
  ASSERT_TRUE(sink->Close().ok());
  auto late = sink->Write("x", 1);
  EXPECT_FALSE(late.ok());
  EXPECT_NE(late.message().find("closed"), std::string::npos) << late.ToString();
}

}  // namespace
}  // namespace skade
