#include "skade/cdc/commit_subscription.h"

#include <arrow/api.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <thread>

#include "skade/table/table.h"
#include "testing/matchers.h"
#include "testing/random_data.h"
#include "testing/temp_dir.h"

namespace skade {
namespace {

using testing::IsOk;

class SubscriptionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cat_ = std::move(*Catalog::Create(dir_.path()));
    ASSERT_THAT(cat_->CreateNamespace("s"), IsOk());
    schema_ = *ParseSchemaSpec("id:long!");
    ASSERT_THAT(cat_->CreateTable({"s", "t"}, schema_, PartitionSpec(), {}), IsOk());
    ASSERT_THAT(cat_->CreateTable({"s", "other"}, schema_, PartitionSpec(), {}), IsOk());
  }
  void Commit(const std::string& name, int64_t id) {
    auto t = Table::Load(*cat_, {"s", name});
    testing::Row r(1);
    r[0].value = Value{id};
    ASSERT_THAT((*t)->Append(testing::ToArrow(schema_, {r})), IsOk());
  }
  testing::TempDir dir_;
  std::unique_ptr<Catalog> cat_;
  Schema schema_;
};

TEST_F(SubscriptionTest, CatchesUpThenReceivesPushedCommitsInOrder) {
  Commit("t", 1);
  cdc::CommitSubscription sub(*cat_, 0, TableIdent{"s", "t"});
  std::vector<int64_t> seqs;
  while (auto e = sub.Next(std::chrono::milliseconds(50))) {
    ASSERT_THAT(e, IsOk());
    if (!*e) break;
    seqs.push_back((*e)->commit_seq);
  }
  ASSERT_EQ(seqs.size(), 2u);  // create + append
  std::thread writer([&] {
    for (int i = 0; i < 20; ++i) {
      Commit("t", 10 + i);
      Commit("other", i);  // filtered out
    }
  });
  for (int i = 0; i < 20; ++i) {
    auto e = sub.Next(std::chrono::seconds(10));
    ASSERT_THAT(e, IsOk());
    ASSERT_TRUE(e->has_value()) << "commit " << i << " not delivered";
    EXPECT_EQ((*e)->table.name, "t");
    EXPECT_GT((*e)->commit_seq, seqs.back());
    EXPECT_EQ((*e)->operation, "append");
    seqs.push_back((*e)->commit_seq);
  }
  writer.join();
  auto none = sub.Next(std::chrono::milliseconds(20));
  ASSERT_THAT(none, IsOk());
  EXPECT_FALSE(none->has_value());
}

TEST_F(SubscriptionTest, SlowSubscriberResyncsWithoutLossOrDuplicates) {
  cdc::CommitSubscription sub(*cat_, 0, std::nullopt, /*capacity=*/4);
  for (int i = 0; i < 60; ++i) Commit(i % 2 ? "t" : "other", i);  // overflows the queue many times
  std::vector<int64_t> seqs;
  while (true) {
    auto e = sub.Next(std::chrono::milliseconds(50));
    ASSERT_THAT(e, IsOk());
    if (!*e) break;
    seqs.push_back((*e)->commit_seq);
  }
  auto log = *cat_->CommitsSince(0);
  ASSERT_EQ(seqs.size(), log.size());
  for (size_t i = 0; i < seqs.size(); ++i) EXPECT_EQ(seqs[i], log[i].commit_seq);
  EXPECT_GT(sub.resyncs(), 0);
  EXPECT_EQ(sub.cursor(), log.back().commit_seq);
}

}  // namespace
}  // namespace skade
