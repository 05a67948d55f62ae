#include "skade/format/manifest.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "skade/avro/avro.h"
#include "testing/matchers.h"

namespace skade {
namespace {

using testing::IsError;
using testing::IsOk;

TEST(ManifestTest, RoundTripsEntriesWithPartitionValuesAndMetrics) {
  Schema schema = *ParseSchemaSpec("id:long!, name:string, ts:timestamptz, d:date, price:decimal(10,2), u:uuid");
  PartitionSpec spec = *ParsePartitionSpec("bucket(8,id), truncate(3,name), day(ts), month(d), price, u", schema);
  std::vector<ManifestEntry> entries;
  for (int i = 0; i < 3; ++i) {
    ManifestEntry e;
    e.snapshot_id = 77;
    DataFile& f = e.data_file;
    f.file_path = "file:///wh/t/data/f" + std::to_string(i) + ".parquet";
    f.partition = {Value{int32_t{i}}, Value{std::string("abc")}, Value{int32_t{19000 + i}}, Value{int32_t{600}},
                   Value{Decimal{12345}}, i == 2 ? Value{} : Value{std::string(16, 'x')}};
    f.record_count = 10 + i;
    f.file_size_in_bytes = 1000;
    f.column_sizes = {{1, 100}, {2, 200}};
    f.stats.value_counts = {{1, 10}};
    f.stats.null_value_counts = {{2, 3}};
    f.stats.lower_bounds = {{1, std::string("\x01\0\0\0\0\0\0\0", 8)}};
    f.stats.upper_bounds = {{2, "zz"}};
    f.split_offsets = {4};
    entries.push_back(e);
  }
  ManifestWriteContext ctx{&schema, &spec, 0, "deflate"};
  auto bytes = WriteManifest(ctx, entries);
  ASSERT_THAT(bytes, IsOk());
  // The header carries what the spec requires.
  auto container = avro::ReadContainer(*bytes);
  ASSERT_THAT(container, IsOk());
  for (const char* key : {"schema", "partition-spec", "partition-spec-id", "format-version", "content"})
    EXPECT_TRUE(container->metadata.contains(key)) << key;
  EXPECT_EQ(container->metadata["content"], "data");
  EXPECT_EQ(container->metadata["avro.codec"], "deflate");

  ManifestFile mf;
  mf.manifest_path = "m.avro";
  mf.added_snapshot_id = 77;
  mf.sequence_number = 5;
  auto back = ReadManifest(*bytes, mf, schema, spec);
  ASSERT_THAT(back, IsOk());
  ASSERT_EQ(back->size(), 3u);
  for (int i = 0; i < 3; ++i) {
    const auto& e = (*back)[i];
    EXPECT_EQ(e.status, EntryStatus::kAdded);
    EXPECT_EQ(e.sequence_number, 5);  // inherited
    EXPECT_EQ(e.file_sequence_number, 5);
    EXPECT_EQ(e.data_file.file_path, entries[i].data_file.file_path);
    EXPECT_EQ(e.data_file.partition, entries[i].data_file.partition);
    EXPECT_EQ(e.data_file.stats.lower_bounds, entries[i].data_file.stats.lower_bounds);
    EXPECT_EQ(e.data_file.stats.upper_bounds, entries[i].data_file.stats.upper_bounds);
    EXPECT_EQ(e.data_file.column_sizes, entries[i].data_file.column_sizes);
    EXPECT_EQ(e.data_file.split_offsets, entries[i].data_file.split_offsets);
  }
}

TEST(ManifestTest, ManifestListRoundTripsWithSummaries) {
  std::vector<ManifestFile> list(2);
  list[0].manifest_path = "a.avro";
  list[0].manifest_length = 10;
  list[0].sequence_number = 3;
  list[0].min_sequence_number = 1;
  list[0].added_snapshot_id = 9;
  list[0].added_files_count = 2;
  list[0].added_rows_count = 20;
  list[0].partitions = std::vector<expr::PartitionFieldSummary>{{false, std::nullopt, "a", "z"}};
  list[1].manifest_path = "b.avro";
  list[1].content = 1;
  auto bytes = WriteManifestList(9, std::nullopt, 3, list);
  ASSERT_THAT(bytes, IsOk());
  auto container = avro::ReadContainer(*bytes);
  EXPECT_EQ(container->metadata["parent-snapshot-id"], "null");
  EXPECT_EQ(container->metadata["sequence-number"], "3");
  auto back = ReadManifestList(*bytes);
  ASSERT_THAT(back, IsOk());
  ASSERT_EQ(back->size(), 2u);
  EXPECT_EQ((*back)[0].min_sequence_number, 1);
  EXPECT_EQ((*back)[0].added_rows_count, 20);
  ASSERT_TRUE((*back)[0].partitions.has_value());
  EXPECT_EQ((*(*back)[0].partitions)[0].upper_bound, "z");
  EXPECT_FALSE((*back)[1].partitions.has_value());
  EXPECT_EQ((*back)[1].content, 1);
}

TEST(ManifestTest, GarbageIsCorrupt) {
  EXPECT_THAT(ReadManifestList("not avro at all"), IsError(ErrorKind::kCorrupt));
  auto bytes = WriteManifestList(1, 2, 3, {});
  ASSERT_THAT(bytes, IsOk());
  for (size_t cut = 0; cut < bytes->size(); cut += 7) {
    auto r = ReadManifestList(bytes->substr(0, cut));
    if (cut < bytes->size()) {
      EXPECT_FALSE(r.has_value() && cut < 20) << cut;
    }
  }
}

}  // namespace
}  // namespace skade
