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

TEST(FileLedgerTest, OutboxIsWrittenWithTheCursorAndKeptInOrder) {
  skade::testing::TempDir dir;
  std::string path = dir.path() + "/g.json";
  {
    FileLedger ledger(path);
    ASSERT_THAT(ledger.AdvanceAndEnqueue("db.people", TableState{1, {}}, R"({"n":1})"), IsOk());
    ASSERT_THAT(ledger.Advance("db.teams", TableState{5, {}}), IsOk());  // keeps the outbox
    ASSERT_THAT(ledger.AdvanceAndEnqueue("db.people", TableState{2, {}}, R"({"n":2})"), IsOk());
    ASSERT_THAT(ledger.AdvanceAndEnqueue("db.teams", TableState{6, {}}, R"({"n":3})"), IsOk());
  }
  FileLedger reopened(path);
  EXPECT_EQ(reopened.Get("db.people")->snapshot_id, 2);
  auto outbox = reopened.Outbox();
  ASSERT_THAT(outbox, IsOk());
  ASSERT_EQ(outbox->size(), 3u);
  EXPECT_EQ((*outbox)[0].body, R"({"n":1})");
  EXPECT_EQ((*outbox)[2].body, R"({"n":3})");
  EXPECT_LT((*outbox)[0].seq, (*outbox)[1].seq);
  ASSERT_THAT(reopened.Dequeue((*outbox)[1].seq), IsOk());
  ASSERT_THAT(reopened.Dequeue((*outbox)[1].seq), IsOk());  // already gone: not an error
  auto left = reopened.Outbox();
  ASSERT_EQ(left->size(), 2u);
  EXPECT_EQ((*left)[1].body, R"({"n":3})");
  // A sequence number is never reused, even after the newest entry left.
  ASSERT_THAT(reopened.Dequeue((*left)[1].seq), IsOk());
  ASSERT_THAT(reopened.AdvanceAndEnqueue("db.teams", TableState{7, {}}, R"({"n":4})"), IsOk());
  EXPECT_GT(reopened.Outbox()->back().seq, (*left)[1].seq);
  // The outbox is not a table.
  EXPECT_THAT(*reopened.ToJson(), ::testing::Not(::testing::HasSubstr("outbox")));
}

}  // namespace
}  // namespace bifrost
