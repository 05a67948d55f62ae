// ChangeStream: windows pushed as commits land, and a consumer that crashes at
// random points (between receiving a window and saving its cursor, or part way
// through a window) and resumes from its saved cursor sees every change exactly
// once and in order, the same as read_changelog over the whole range.
#include "skade/cdc/change_stream.h"

#include <arrow/api.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "skade/table/table.h"
#include "testing/matchers.h"
#include "testing/random_data.h"
#include "testing/temp_dir.h"

namespace skade {
namespace {

using cdc::ChangeCursor;
using cdc::ChangeStream;
using testing::IsError;
using testing::IsOk;
using testing::Row;

// One change row as text, with the snapshot it belongs to.
struct ChangeRow {
  int64_t snapshot_id;
  std::string text;  // _change_type + the row's columns
  bool operator==(const ChangeRow&) const = default;
};

std::vector<ChangeRow> Rows(const arrow::Table& t, const Schema& schema) {
  std::vector<NestedField> fields = schema.fields();
  size_t n = fields.size();
  fields.push_back(NestedField{-1, "_change_type", true, Type::Primitive(TypeId::kString), ""});
  fields.push_back(NestedField{-2, "_change_ordinal", true, Type::Primitive(TypeId::kInt), ""});
  fields.push_back(NestedField{-3, "_commit_snapshot_id", true, Type::Primitive(TypeId::kLong), ""});
  std::vector<NestedField> data(fields.begin(), fields.begin() + static_cast<long>(n));
  std::vector<ChangeRow> out;
  for (auto r : testing::FromArrow(t, fields)) {
    int64_t snap = std::get<int64_t>(r[n + 2].value);
    std::string type = std::get<std::string>(r[n].value);
    r.resize(n);
    out.push_back({snap, type + " " + testing::RowToString(r, data)});
  }
  return out;
}

// Rows grouped per snapshot, in snapshot order; each group sorted (a snapshot's
// rows have no order of their own).
std::vector<std::pair<int64_t, std::vector<std::string>>> BySnapshot(const std::vector<ChangeRow>& rows) {
  std::vector<std::pair<int64_t, std::vector<std::string>>> out;
  for (const auto& r : rows) {
    if (out.empty() || out.back().first != r.snapshot_id) out.push_back({r.snapshot_id, {}});
    out.back().second.push_back(r.text);
  }
  for (auto& [_, v] : out) std::sort(v.begin(), v.end());
  return out;
}

class ChangeStreamTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cat_ = std::move(*Catalog::Create(dir_.path()));
    ASSERT_THAT(cat_->CreateNamespace("s"), IsOk());
    schema_ = Schema(0,
                     {NestedField{1, "id", true, Type::Primitive(TypeId::kLong), ""},
                      NestedField{2, "v", false, Type::Primitive(TypeId::kString), ""}},
                     {1});
    ASSERT_THAT(cat_->CreateTable({"s", "t"}, schema_, PartitionSpec(), {}), IsOk());
  }
  std::shared_ptr<arrow::Table> Batch(testing::RandomData& d, int n) {
    std::vector<Row> rows;
    for (int i = 0; i < n; ++i) {
      Row r(2);
      r[0].value = Value{static_cast<int64_t>(d.Uniform(0, 40))};
      r[1].value = Value{std::string("v") + std::to_string(d.Uniform(0, 1000))};
      rows.push_back(r);
    }
    return testing::ToArrow(schema_, rows);
  }
  // One random write: append, delete by filter, upsert or compaction.
  void RandomWrite(Table& t, testing::RandomData& d) {
    switch (d.Uniform(0, 5)) {
      case 0:
      case 1:
        ASSERT_THAT(t.Append(Batch(d, d.Uniform(1, 6))), IsOk());
        break;
      case 2:
        ASSERT_THAT(t.Delete("id < " + std::to_string(d.Uniform(0, 10))), IsOk());
        break;
      case 3:
      case 4:
        ASSERT_THAT(t.Upsert(Batch(d, d.Uniform(1, 4))), IsOk());
        break;
      default:
        ASSERT_THAT(t.Compact(std::nullopt), IsOk());
    }
  }
  testing::TempDir dir_;
  std::unique_ptr<Catalog> cat_;
  Schema schema_;
};

TEST_F(ChangeStreamTest, CursorTextRoundTripsAndRejectsGarbage) {
  for (ChangeCursor c : {ChangeCursor{0, std::nullopt}, ChangeCursor{12, 4711}, ChangeCursor{3, -9}}) {
    auto back = ChangeCursor::Parse(c.ToString());
    ASSERT_THAT(back, IsOk());
    EXPECT_EQ(*back, c);
  }
  for (const char* bad : {"", ":", "12", "x:1", "1:y", "-1:5", "1:2:3", "1: 2"})
    EXPECT_THAT(ChangeCursor::Parse(bad), IsError(ErrorKind::kInvalidArgument)) << bad;
}

TEST_F(ChangeStreamTest, WindowsArriveAsCommitsLandFromAnotherThread) {
  auto from = ChangeStream::CurrentCursor(*cat_, {"s", "t"});
  ASSERT_THAT(from, IsOk());
  auto stream = ChangeStream::Open(*cat_, {"s", "t"}, *from);
  ASSERT_THAT(stream, IsOk());
  auto idle = (*stream)->Next(std::chrono::milliseconds(30));
  ASSERT_THAT(idle, IsOk());
  EXPECT_FALSE(idle->has_value());

  std::thread writer([&] {
    auto other = std::move(*Catalog::Create(dir_.path()));  // a second connection, like another process
    auto t = std::move(*Table::Load(*other, {"s", "t"}));
    testing::RandomData d(7);
    for (int i = 0; i < 5; ++i) ASSERT_THAT(t->Append(Batch(d, 2)), IsOk());
  });
  int64_t seen = 0;
  ChangeCursor last = *from;
  while (seen < 5) {
    auto w = (*stream)->Next(std::chrono::seconds(10));
    ASSERT_THAT(w, IsOk());
    ASSERT_TRUE(w->has_value()) << "no window after " << seen << " commits";
    EXPECT_EQ((*w)->begin, last);
    last = (*w)->end;
    seen += static_cast<int64_t>((*w)->snapshots.size());
    EXPECT_EQ((*w)->rows->num_rows(), 2 * static_cast<int64_t>((*w)->snapshots.size()));
    EXPECT_EQ((*stream)->cursor(), (*w)->end);
  }
  writer.join();
  EXPECT_EQ(seen, 5);
}

TEST_F(ChangeStreamTest, KilledConsumerResumesFromItsCursorExactlyOnceInOrder) {
  auto start = ChangeStream::CurrentCursor(*cat_, {"s", "t"});
  ASSERT_THAT(start, IsOk());
  std::atomic<bool> done{false};
  std::thread writer([&] {
    auto other = std::move(*Catalog::Create(dir_.path()));
    auto t = std::move(*Table::Load(*other, {"s", "t"}));
    testing::RandomData d(11);
    for (int i = 0; i < 60; ++i) RandomWrite(*t, d);
    done = true;
  });

  testing::RandomData chaos(5);
  ChangeCursor saved = *start;      // what the consumer persisted
  std::vector<ChangeRow> delivered;  // what it persisted with that cursor
  int crashes = 0;
  while (true) {
    auto stream = ChangeStream::Open(*cat_, {"s", "t"}, saved);
    ASSERT_THAT(stream, IsOk());
    int windows_before_crash = chaos.Uniform(1, 4);
    bool crashed = false;
    for (int i = 0; i < windows_before_crash && !crashed; ++i) {
      auto w = (*stream)->Next(std::chrono::milliseconds(done ? 100 : 2000));
      ASSERT_THAT(w, IsOk());
      if (!w->has_value()) break;
      auto rows = Rows(*(*w)->rows, schema_);
      switch (chaos.Uniform(0, 2)) {
        case 0:  // crash before saving anything of this window
          crashed = true;
          break;
        case 1: {  // crash part way: keep the first snapshots and their cursor
          size_t keep = static_cast<size_t>(chaos.Uniform(0, static_cast<int>((*w)->snapshots.size()) - 1));
          for (size_t s = 0; s < keep; ++s) {
            for (const auto& r : rows)
              if (r.snapshot_id == (*w)->snapshots[s].snapshot_id) delivered.push_back(r);
            saved = (*w)->snapshots[s].resume;
          }
          crashed = true;
          break;
        }
        default:  // the whole window, then its cursor
          delivered.insert(delivered.end(), rows.begin(), rows.end());
          saved = (*w)->end;
      }
    }
    if (crashed) ++crashes;
    auto t = Table::Load(*cat_, {"s", "t"});
    ASSERT_THAT(t, IsOk());
    const Snapshot* cur = (*t)->metadata()->CurrentSnapshot();
    if (done && !crashed && cur && saved.snapshot_id == cur->snapshot_id) break;
  }
  writer.join();
  EXPECT_GT(crashes, 3);

  auto t = std::move(*Table::Load(*cat_, {"s", "t"}));
  auto all = cdc::ReadChangelog(*t, start->snapshot_id, std::nullopt);
  ASSERT_THAT(all, IsOk());
  auto expected = Rows(**all, schema_);
  ASSERT_GT(expected.size(), 50u);
  EXPECT_EQ(BySnapshot(delivered), BySnapshot(expected));
}

TEST_F(ChangeStreamTest, EndsWithAClearErrorWhenTheTableIsDroppedOrRolledBack) {
  auto t = std::move(*Table::Load(*cat_, {"s", "t"}));
  testing::RandomData d(3);
  ASSERT_THAT(t->Append(Batch(d, 2)), IsOk());
  int64_t first = t->metadata()->CurrentSnapshot()->snapshot_id;
  ASSERT_THAT(t->Append(Batch(d, 2)), IsOk());
  auto at = ChangeStream::CurrentCursor(*cat_, {"s", "t"});
  ASSERT_THAT(at, IsOk());
  auto stream = ChangeStream::Open(*cat_, {"s", "t"}, *at);
  ASSERT_THAT(stream, IsOk());
  ASSERT_THAT(t->Rollback(first), IsOk());
  auto w = (*stream)->Next(std::chrono::seconds(5));
  EXPECT_THAT(w, IsError(ErrorKind::kNotFound));
  EXPECT_THAT(w.error().message, ::testing::HasSubstr("not in the history"));

  auto from_first = ChangeStream::Open(*t, ChangeCursor{0, std::nullopt});
  ASSERT_THAT(from_first, IsOk());
  ASSERT_THAT(cat_->DropTable({"s", "t"}), IsOk());
  auto gone = (*from_first)->Next(std::chrono::seconds(5));
  EXPECT_THAT(gone, IsError(ErrorKind::kNotFound));
  EXPECT_THAT(gone.error().message, ::testing::HasSubstr("dropped"));

  EXPECT_THAT(ChangeStream::Open(*cat_, {"s", "missing"}, ChangeCursor{}), IsError(ErrorKind::kNotFound));
  ASSERT_THAT(cat_->CreateTable({"s", "t"}, schema_, PartitionSpec(), {}), IsOk());
  auto never = ChangeStream::Open(*cat_, {"s", "t"}, ChangeCursor{0, 12345});
  EXPECT_THAT(never, IsError(ErrorKind::kNotFound));  // caught at open, not at the first commit
}

TEST_F(ChangeStreamTest, BadOptionsFailAtOpen) {
  cdc::ChangelogOptions o;
  o.columns = {"nope"};
  EXPECT_THAT(ChangeStream::Open(*cat_, {"s", "t"}, ChangeCursor{}, o), IsError(ErrorKind::kInvalidArgument));
}

}  // namespace
}  // namespace skade
