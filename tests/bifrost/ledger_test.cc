// The file ledger: cursors survive reopening, a corrupt file is an error naming it,
// and two holders cannot run a round at once. (The Valkey ledger runs against a
// real server in tests/bifrost/test_crash_and_sharing.py.)
#include "bifrost/state/ledger.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "testing/matchers.h"
#include "testing/temp_dir.h"

namespace bifrost {
namespace {

using skade::testing::IsErrorWith;
using skade::testing::IsOk;

TEST(FileLedgerTest, AdvancesDurablyAndReopens) {
  skade::testing::TempDir dir;
  std::string path = dir.path() + "/state/g.json";
  {
    FileLedger ledger(path);
    auto empty = ledger.Get("db.people");
    ASSERT_THAT(empty, IsOk());
    EXPECT_FALSE(empty->snapshot_id.has_value());
    ASSERT_THAT(ledger.Advance("db.people", TableState{42, {"a.parquet"}}), IsOk());
    ASSERT_THAT(ledger.Advance("db.teams", TableState{7, {}}), IsOk());
  }
  FileLedger reopened(path);
  auto got = reopened.Get("db.people");
  ASSERT_THAT(got, IsOk());
  EXPECT_EQ(*got, (TableState{42, {"a.parquet"}}));
  EXPECT_EQ(reopened.Get("db.teams")->snapshot_id, 7);
}

TEST(FileLedgerTest, CorruptFileIsNamed) {
  skade::testing::TempDir dir;
  std::string path = dir.path() + "/g.json";
  std::ofstream(path) << "{not json";
  FileLedger ledger(path);
  EXPECT_THAT(ledger.Get("db.people"), IsErrorWith(skade::ErrorKind::kCorrupt, path));
}

TEST(FileLedgerTest, OneRoundHolderAtATime) {
  skade::testing::TempDir dir;
  std::string path = dir.path() + "/g.json";
  FileLedger a(path), b(path);
  using std::chrono::seconds;
  EXPECT_EQ(a.AcquireRound(seconds(1)).value(), true);
  EXPECT_EQ(b.AcquireRound(seconds(1)).value(), false);
  a.ReleaseRound();
  EXPECT_EQ(b.AcquireRound(seconds(1)).value(), true);
}

}  // namespace
}  // namespace bifrost
