// Late materialisation in the scan: the filter columns decode first; of the other
// projected columns only the data pages holding a row that passed, and dictionary-encoded
// strings stay dictionaries until the rows that pass are known. Every result is checked
// against the unfiltered scan filtered row by row by the reference evaluator.
#include <arrow/api.h>
#include <arrow/util/byte_size.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <parquet/file_reader.h>
#include <parquet/metadata.h>

#include <algorithm>
#include <fstream>

#include "skade/expr/expression.h"
#include "skade/io/file_io.h"
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

constexpr int64_t kRows = 100000;

class LateMaterialisation : public ::testing::Test {
 protected:
  void SetUp() override {
    cat_ = std::move(*Catalog::Create(dir_.path()));
    ASSERT_THAT(cat_->CreateNamespace("t"), IsOk());
    schema_ = *ParseSchemaSpec("id:long!, v:double, w:int, ts:timestamptz, cat:string, note:string");
    // Two row groups of 50k rows; Parquet's writer cuts pages of at most 20k rows.
    auto created = cat_->CreateTable({"t", "lm"}, schema_, PartitionSpec{},
                                     {{"write.parquet.row-group-limit", "50000"}});
    ASSERT_THAT(created, IsOk());
    table_ = std::move(*Table::Load(*cat_, {"t", "lm"}));
    for (int64_t i = 0; i < kRows; ++i) {
      Row r(6);
      auto set = [&](size_t k, bool present, Value v) {
        r[k].null = !present;
        if (present) r[k].value = std::move(v);
      };
      set(0, true, Value{i});
      set(1, i % 7 != 0, Value{static_cast<double>(i) * 0.5});
      set(2, i % 11 != 0, Value{static_cast<int32_t>(i % 1000)});
      set(3, true, Value{int64_t{1'700'000'000'000'000} + i * 1000});
      set(4, i % 17 != 0, Value{"c" + std::to_string(i % 13)});
      set(5, i % 5 != 0, Value{std::string(i % 3 ? "plain" : "other")});
      rows_.push_back(std::move(r));
    }
    ASSERT_THAT(table_->Append(testing::ToArrow(schema_, rows_)), IsOk());
  }

  struct Scanned {
    std::vector<std::string> rows;  // sorted
    ScanStats stats;
    std::shared_ptr<arrow::Schema> schema;
    int64_t buffer_bytes = 0;  // of the result's columns
    int64_t needed_bytes = 0;  // what its rows take in buffers of their own (no padding)
  };

  // The bytes a table's values take: fixed widths, string offsets and bytes, validity.
  static int64_t NeededBytes(const arrow::Table& table) {
    int64_t bytes = 0;
    for (const auto& column : table.columns())
      for (const auto& chunk : column->chunks()) {
        const int64_t n = chunk->length();
        if (chunk->null_count() > 0) bytes += (n + 7) / 8;
        if (chunk->type_id() == arrow::Type::STRING) {
          const auto& s = static_cast<const arrow::StringArray&>(*chunk);
          bytes += (n + 1) * 4 + (n > 0 ? s.value_offset(n) - s.value_offset(0) : 0);
        } else {
          bytes += n * static_cast<const arrow::FixedWidthType&>(*chunk->type()).bit_width() / 8;
        }
      }
    return bytes;
  }

  Scanned Scan(const std::string& filter, int parallelism, arrow::MemoryPool* pool = nullptr, int64_t budget = 0,
               int64_t limit = -1) {
    TableScan scan = table_->NewScan().Filter(filter);
    if (limit >= 0) scan.Limit(limit);
    auto plan = scan.Plan();
    EXPECT_THAT(plan, IsOk()) << filter;
    plan->parallelism = parallelism;
    plan->pool = pool;
    plan->memory_budget_bytes = budget;
    auto reader = TableScan::Read(*plan, &cat_->io());
    EXPECT_THAT(reader, IsOk());
    auto table = (*reader)->ToTable();
    EXPECT_TRUE(table.ok()) << filter << ": " << table.status().ToString();
    Scanned out;
    for (const auto& r : testing::FromArrow(**table, schema_.fields()))
      out.rows.push_back(testing::RowToString(r, schema_.fields()));
    std::sort(out.rows.begin(), out.rows.end());
    out.stats = *plan->stats;
    out.schema = (*table)->schema();
    out.buffer_bytes = arrow::util::TotalBufferSize(**table);
    out.needed_bytes = NeededBytes(**table);
    return out;
  }

  std::vector<std::string> Expected(const std::string& filter) {
    auto bound = expr::Bind(*expr::Parse(filter), schema_);
    EXPECT_THAT(bound, IsOk()) << filter;
    std::vector<std::string> out;
    for (const auto& r : rows_)
      if (testing::EvalRow(**bound, schema_, r).value_or(false))
        out.push_back(testing::RowToString(r, schema_.fields()));
    std::sort(out.begin(), out.end());
    return out;
  }

  testing::TempDir dir_;
  std::unique_ptr<Catalog> cat_;
  Schema schema_;
  std::unique_ptr<Table> table_;
  std::vector<Row> rows_;
};

TEST_F(LateMaterialisation, PagesWithoutSurvivorsAreNotDecoded) {
  // Rows 41000..41499 sit in one page of the first row group (the second is pruned by
  // its statistics): v, w and ts decode that page only.
  for (int parallelism : {1, 0}) {
    auto got = Scan("id >= 41000 and id < 41500", parallelism);
    EXPECT_EQ(got.rows, Expected("id >= 41000 and id < 41500"));
    EXPECT_EQ(got.rows.size(), 500u);
    EXPECT_GT(got.stats.pages_skipped, 0);
    // Survivors in every page: nothing to skip.
    got = Scan("w = 7", parallelism);
    EXPECT_EQ(got.rows, Expected("w = 7"));
    EXPECT_EQ(got.stats.pages_skipped, 0);
    // The first and last rows only: the pages in between are skipped in both row groups.
    got = Scan("id = 0 or id = 99999 or (cat = 'c3' and id > 99000)", parallelism);
    EXPECT_EQ(got.rows, Expected("id = 0 or id = 99999 or (cat = 'c3' and id > 99000)"));
    EXPECT_GT(got.stats.pages_skipped, 0);
  }
}

TEST_F(LateMaterialisation, FilterColumnPagesOutsideTheFilterAreNeitherReadNorDecoded) {
  // Each page's bounds are in the file's page index: a page of a number the filter reads
  // whose bounds rule the filter out is skipped before the filter sees it. Projecting only
  // `id` leaves no other column to skip pages of, so every page skipped is such a page.
  auto ids_only = [&](const std::string& filter, int parallelism) {
    auto plan = table_->NewScan().Select({"id"}).Filter(filter).Plan();
    EXPECT_THAT(plan, IsOk()) << filter;
    plan->parallelism = parallelism;
    auto reader = TableScan::Read(*plan, &cat_->io());
    EXPECT_THAT(reader, IsOk());
    auto table = (*reader)->ToTable();
    EXPECT_TRUE(table.ok()) << filter;
    return std::make_pair((*table)->num_rows(), plan->stats->pages_skipped);
  };
  for (int parallelism : {1, 0}) {
    // Rows 41000..41499: the first row group's third page; the second row group is pruned
    // by its own bounds.
    EXPECT_EQ(ids_only("id >= 41000 and id < 41500", parallelism), std::make_pair(int64_t{500}, int64_t{2}));
    // Both ends of the table: the pages in between go, in both row groups.
    EXPECT_EQ(ids_only("id < 5 or id > 99990", parallelism), std::make_pair(int64_t{14}, int64_t{4}));
    // A condition on another column keeps every page: the page index of `id` cannot rule
    // out a row that `w` alone may select.
    EXPECT_EQ(ids_only("id < 5 or w = 7", parallelism).second, 0);
  }
  // Whatever the filter and projection, the rows are the reference's.
  const char* filters[] = {
      "id >= 41000 and id < 41500",
      "id < 5 or id > 99990",
      "id > 30000 and note = 'other' and id <= 30100",
      "id is null or id = 45000",
      "not (id >= 10)",
      "v < 10",
      "v is null and id > 95000",
      "w = 7 and id >= 20000 and id <= 20100",
      "id >= 41000 and id < 41500 and cat = 'c3'",
      "ts >= '2023-11-14T22:14:59.999Z' and id < 60000",
  };
  for (const char* f : filters)
    for (int parallelism : {1, 0}) EXPECT_EQ(Scan(f, parallelism).rows, Expected(f)) << f;
  // And with rows deleted inside the pages that are read.
  ASSERT_THAT(table_->Delete("id >= 41100 and id < 41200"), IsOk());
  std::erase_if(rows_, [](const Row& r) {
    int64_t id = std::get<int64_t>(r[0].value);
    return id >= 41100 && id < 41200;
  });
  EXPECT_EQ(Scan("id >= 41000 and id < 41500", 0).rows, Expected("id >= 41000 and id < 41500"));
  EXPECT_EQ(ids_only("id >= 41000 and id < 41500", 0).first, 400);
}

TEST_F(LateMaterialisation, ADamagedPageIndexIsIgnored) {
  // The page index only saves work: overwrite every column index of the data file with
  // bytes that are no index, and the scan reads as it would without one.
  auto plan = table_->NewScan().Plan();
  ASSERT_THAT(plan, IsOk());
  ASSERT_EQ(plan->tasks.size(), 1u);
  const std::string path = LocalPath(plan->tasks[0].file.file_path);
  std::vector<std::pair<int64_t, int64_t>> indexes;
  {
    auto reader = parquet::ParquetFileReader::OpenFile(path);
    auto md = reader->metadata();
    for (int rg = 0; rg < md->num_row_groups(); ++rg)
      for (int c = 0; c < md->num_columns(); ++c)
        if (auto at = md->RowGroup(rg)->ColumnChunk(c)->GetColumnIndexLocation()) indexes.emplace_back(at->offset, at->length);
  }
  ASSERT_FALSE(indexes.empty()) << "the data file has no page index";
  std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
  for (const auto& [offset, length] : indexes) {
    file.seekp(offset);
    const std::string junk(static_cast<size_t>(length), '\xff');
    file.write(junk.data(), length);
  }
  file.close();
  for (const char* f : {"id >= 41000 and id < 41500", "v < 10", "id < 5 or id > 99990"}) {
    auto got = Scan(f, 0);
    EXPECT_EQ(got.rows, Expected(f)) << f;
  }
}

TEST_F(LateMaterialisation, FiltersOnDictionaryStringsMatchTheReference) {
  const char* filters[] = {
      "cat = 'c3'",
      "cat != 'c3' and id < 30000",
      "cat in ('c1', 'c12', 'zz') or note is null",
      "not (cat in ('c1', 'c2')) and note = 'other'",
      "cat is null",
      "cat >= 'c5' and cat < 'c7'",
      "note not in ('plain') and (id < 1000 or id > 90000)",
      "cat = 'nope'",
  };
  for (const char* f : filters) {
    auto got = Scan(f, 0);
    EXPECT_EQ(got.rows, Expected(f)) << f;
    // Strings come out dense whichever path they took.
    EXPECT_EQ(got.schema->GetFieldByName("cat")->type()->id(), arrow::Type::STRING) << f;
    EXPECT_EQ(got.schema->GetFieldByName("note")->type()->id(), arrow::Type::STRING) << f;
  }
  testing::RandomData data(1313);
  for (int k = 0; k < 12; ++k) {
    std::string f = testing::RandomFilter(data, schema_, 2);
    EXPECT_EQ(Scan(f, k % 2).rows, Expected(f)) << f;
  }
}

TEST_F(LateMaterialisation, AFewRowsThatPassHoldMemoryForThemselves) {
  // The filter column `id` is decoded whole; the 500 rows that pass must not keep its
  // 50k-row buffer alive in the result, whether the row group is decoded whole or streamed
  // a batch at a time (a budget below its size).
  const char* few = "id >= 41000 and id < 41500";
  for (int64_t budget : {int64_t{0}, int64_t{256} << 10}) {
    for (int parallelism : {1, 0}) {
      auto got = Scan(few, parallelism, nullptr, budget);
      ASSERT_EQ(got.rows, Expected(few));
      // Each of the 500 rows takes 8 + 8 + 4 + 8 bytes and two short strings with their
      // offsets: under 64 bytes. Arrow pads each buffer to 64 bytes.
      EXPECT_LT(got.buffer_bytes, 500 * 64 + 64 * 64) << "budget " << budget << " parallelism " << parallelism;
    }
  }
  // Whatever share passes, the result holds at most twice what its rows take (plus
  // Arrow's padding): survivors stay in the decoded buffers only when they fill half.
  for (const char* f : {"w < 10", "w < 100", "w < 400", "w < 600", "w >= 1"}) {
    for (int64_t budget : {int64_t{0}, int64_t{256} << 10}) {
      auto got = Scan(f, 0, nullptr, budget);
      ASSERT_EQ(got.rows, Expected(f));
      EXPECT_LT(got.buffer_bytes, 2 * got.needed_bytes + 64 * 64) << f << " budget " << budget;
    }
  }
  // So do the first rows of a batch that a limit cuts.
  for (int64_t limit : {10, 40000}) {
    auto got = Scan("id >= 0", 0, nullptr, 0, limit);
    ASSERT_EQ(got.rows.size(), static_cast<size_t>(limit));
    EXPECT_LT(got.buffer_bytes, 2 * got.needed_bytes + 64 * 64) << "limit " << limit;
  }
}

TEST_F(LateMaterialisation, BatchesAreDecodedIntoThePlansPool) {
  // A rewrite hands the scan its writer's pool; whatever path a column takes (whole
  // chunks, pages after a filter, dictionaries made dense) it must allocate there.
  for (const char* f : {"id >= 0", "id >= 41000 and id < 41500", "cat = 'c3'"}) {
    for (int parallelism : {1, 0}) {
      arrow::ProxyMemoryPool pool(arrow::default_memory_pool());
      auto got = Scan(f, parallelism, &pool);
      EXPECT_EQ(got.rows, Expected(f)) << f;
      EXPECT_GE(pool.total_bytes_allocated(), got.buffer_bytes) << f << " parallelism " << parallelism;
    }
  }
}

}  // namespace
}  // namespace skade
