// Model-based test: random appends (random types, nulls, partitions) against an
// in-memory model; at every snapshot, random projections and filters must give
// exactly the model's rows.
#include <arrow/api.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "skade/table/scan.h"
#include "skade/table/table.h"
#include "testing/matchers.h"
#include "testing/random_data.h"
#include "testing/row_eval.h"
#include "testing/temp_dir.h"

namespace skade {
namespace {

using testing::IsOk;
using testing::Row;

std::string RandomPartition(testing::RandomData& d, const Schema& s) {
  std::vector<std::string> parts;
  for (const auto& f : s.fields()) {
    if (!f.type->is_primitive() || !d.Chance(0.3)) continue;
    switch (f.type->id) {
      case TypeId::kTimestamp:
      case TypeId::kTimestampTz: {
        const char* t[] = {"year", "month", "day", "hour"};
        parts.push_back(std::string(t[d.Uniform(0, 3)]) + "(" + f.name + ")");
        break;
      }
      case TypeId::kDate: parts.push_back(std::string(d.Chance(0.5) ? "month(" : "day(") + f.name + ")"); break;
      case TypeId::kInt:
      case TypeId::kLong:
      case TypeId::kString:
        parts.push_back(d.Chance(0.5) ? "bucket(" + std::to_string(d.Uniform(2, 5)) + "," + f.name + ")"
                                      : "truncate(" + std::to_string(d.Uniform(1, 3)) + "," + f.name + ")");
        break;
      case TypeId::kFloat:
      case TypeId::kDouble:
        break;  // identity on floats is legal but NaN-free data makes it dull
      default: parts.push_back(f.name);
    }
    if (parts.size() == 3) break;
  }
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : ", ") + p;
  return out;
}

TEST(ModelTest, RandomAppendsScansEqualModel) {
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    testing::TempDir dir;
    auto cat = std::move(*Catalog::Create(dir.path()));
    ASSERT_THAT(cat->CreateNamespace("m"), IsOk());
    testing::RandomData d(seed * 7919);
    Schema schema = d.RandomSchema(d.Uniform(3, 9), /*nested=*/seed % 2 == 0);
    std::string pspec = RandomPartition(d, schema);
    auto spec = pspec.empty() ? Result<PartitionSpec>(PartitionSpec()) : ParsePartitionSpec(pspec, schema);
    ASSERT_THAT(spec, IsOk()) << pspec;
    std::map<std::string, std::string> props{{"write.parquet.row-group-limit", std::to_string(d.Uniform(20, 200))}};
    ASSERT_THAT(cat->CreateTable({"m", "t"}, schema, *spec, props), IsOk());
    auto table = std::move(*Table::Load(*cat, {"m", "t"}));
    SCOPED_TRACE("seed " + std::to_string(seed) + " schema " + Type::Struct(schema.fields())->ToString() +
                 " partition [" + pspec + "]");

    std::vector<std::vector<Row>> model_at;  // rows visible at each snapshot
    std::vector<int64_t> snapshots;
    std::vector<Row> model;
    for (int step = 0; step < 5; ++step) {
      std::vector<Row> batch;
      int n = d.Uniform(1, 300);
      for (int i = 0; i < n; ++i) batch.push_back(d.RandomRow(schema, 0.15));
      auto res = table->Append(testing::ToArrow(schema, batch));
      ASSERT_THAT(res, IsOk());
      model.insert(model.end(), batch.begin(), batch.end());
      model_at.push_back(model);
      snapshots.push_back(res->snapshot_id);

      // Check every snapshot so far with random projections and filters.
      for (size_t s = 0; s < snapshots.size(); ++s) {
        for (int q = 0; q < 4; ++q) {
          std::vector<std::string> cols;
          std::vector<size_t> idx;
          for (size_t c = 0; c < schema.fields().size(); ++c)
            if (d.Chance(0.6)) {
              cols.push_back(schema.fields()[c].name);
              idx.push_back(c);
            }
          if (cols.empty()) {
            cols.push_back(schema.fields()[0].name);
            idx.push_back(0);
          }
          std::string filter = testing::RandomFilter(d, schema, 2);
          TableScan scan = table->NewScan().Select(cols).Filter(filter).UseSnapshot(snapshots[s]);
          auto plan = scan.Plan();
          ASSERT_THAT(plan, IsOk()) << filter;
          auto reader = TableScan::Read(*plan, &cat->io());
          auto got_table = (*reader)->ToTable();
          ASSERT_TRUE(got_table.ok()) << got_table.status().ToString() << " filter " << filter;
          std::vector<NestedField> fields;
          for (size_t c : idx) fields.push_back(schema.fields()[c]);
          std::vector<std::string> got, want;
          for (const auto& r : testing::FromArrow(**got_table, fields)) got.push_back(testing::RowToString(r, fields));
          for (const auto& r : model_at[s]) {
            auto keep = testing::EvalRow(*plan->filter, schema, r);
            if (!keep || !*keep) continue;
            Row proj;
            for (size_t c : idx) proj.push_back(r[c]);
            want.push_back(testing::RowToString(proj, fields));
          }
          std::sort(got.begin(), got.end());
          std::sort(want.begin(), want.end());
          ASSERT_EQ(got, want) << "filter: " << filter << " snapshot #" << s;
          EXPECT_LE(plan->stats->files_planned, plan->stats->files_total);
        }
      }
    }
  }
}

}  // namespace
}  // namespace skade
