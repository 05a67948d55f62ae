#include "skade/io/file_io.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

#include "testing/matchers.h"
#include "testing/temp_dir.h"

namespace skade {
namespace {

using testing::IsError;
using testing::IsOk;

TEST(FileIOTest, PublishesNewFilesOnceAndReadsThemBack) {
  testing::TempDir dir;
  auto io = MakeLocalFileIO();
  std::string path = FileUri(dir.path() + "/a/b/c.txt");
  ASSERT_THAT(io->WriteNewFile(path, "hello"), IsOk());
  EXPECT_EQ(*io->ReadFile(path), "hello");
  EXPECT_EQ(*io->ReadFile(dir.path() + "/a/b/c.txt"), "hello");  // plain path too
  // Never replaces an existing file.
  EXPECT_THAT(io->WriteNewFile(path, "other"), IsError(ErrorKind::kAlreadyExists));
  EXPECT_EQ(*io->ReadFile(path), "hello");
  auto files = io->ListFiles(dir.path());
  ASSERT_THAT(files, IsOk());
  ASSERT_EQ(files->size(), 1u);  // no temporary left behind
  EXPECT_EQ((*files)[0].size, 5);
  ASSERT_THAT(io->DeleteFile(path), IsOk());
  EXPECT_FALSE(*io->Exists(path));
  EXPECT_THAT(io->ReadFile(path), IsError(ErrorKind::kNotFound));
  EXPECT_THAT(io->DeleteFile(path), IsOk());  // deleting twice is fine
  EXPECT_TRUE(io->ListFiles(dir.path() + "/missing")->empty());
}

TEST(FileIOTest, PathsAndUuids) {
  EXPECT_EQ(LocalPath("file:///x/y"), "/x/y");
  EXPECT_EQ(LocalPath("/x/y"), "/x/y");
  EXPECT_EQ(FileUri("/x/y"), "file:///x/y");
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) {
    std::string u = NewUuid();
    ASSERT_EQ(u.size(), 36u);
    EXPECT_EQ(u[14], '4');
    seen.insert(u);
  }
  EXPECT_EQ(seen.size(), 1000u);
}

}  // namespace
}  // namespace skade
