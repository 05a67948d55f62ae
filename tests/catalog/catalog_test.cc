#include "skade/catalog/catalog.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <chrono>
#include <filesystem>
#include <future>
#include <fstream>
#include <limits>

#include "skade/catalog/names.h"
#include "skade/io/file_io.h"
#include "testing/matchers.h"
#include "testing/temp_dir.h"

namespace skade {
namespace {

using testing::IsError;
using testing::IsOk;
using ::testing::ElementsAre;

Schema SimpleSchema() { return *ParseSchemaSpec("id:long!, name:string"); }

class CatalogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto c = Catalog::Create(dir_.path());
    ASSERT_THAT(c, IsOk());
    cat_ = std::move(*c);
  }
  testing::TempDir dir_;
  std::unique_ptr<Catalog> cat_;
};

TEST_F(CatalogTest, NamespacesCreateListDrop) {
  ASSERT_THAT(cat_->CreateNamespace("sales"), IsOk());
  ASSERT_THAT(cat_->CreateNamespace("hr"), IsOk());
  EXPECT_THAT(cat_->CreateNamespace("sales"), IsError(ErrorKind::kAlreadyExists));
  EXPECT_THAT(*cat_->ListNamespaces(), ElementsAre("hr", "sales"));
  ASSERT_THAT(cat_->DropNamespace("hr"), IsOk());
  EXPECT_THAT(cat_->DropNamespace("hr"), IsError(ErrorKind::kNotFound));
  EXPECT_THAT(*cat_->ListNamespaces(), ElementsAre("sales"));
}

TEST_F(CatalogTest, DropNamespaceRefusesNonEmpty) {
  ASSERT_THAT(cat_->CreateNamespace("sales"), IsOk());
  ASSERT_THAT(cat_->CreateTable({"sales", "orders"}, SimpleSchema(), PartitionSpec(), {}), IsOk());
  auto st = cat_->DropNamespace("sales");
  ASSERT_THAT(st, IsError(ErrorKind::kNotEmpty));
  EXPECT_THAT(st.error().message, ::testing::HasSubstr("sales.orders"));
}

TEST_F(CatalogTest, TablesCreateLoadRenameDrop) {
  ASSERT_THAT(cat_->CreateNamespace("sales"), IsOk());
  EXPECT_THAT(cat_->CreateTable({"nope", "t"}, SimpleSchema(), PartitionSpec(), {}), IsError(ErrorKind::kNotFound));
  auto created = cat_->CreateTable({"sales", "orders"}, SimpleSchema(), PartitionSpec(), {{"k", "v"}});
  ASSERT_THAT(created, IsOk());
  EXPECT_THAT(created->metadata_location, ::testing::HasSubstr("/metadata/00000-"));
  EXPECT_THAT(cat_->CreateTable({"sales", "orders"}, SimpleSchema(), PartitionSpec(), {}),
              IsError(ErrorKind::kAlreadyExists));
  auto loaded = cat_->LoadTable({"sales", "orders"});
  ASSERT_THAT(loaded, IsOk());
  EXPECT_TRUE(loaded->metadata->schema()->SameFields(SimpleSchema()));
  EXPECT_EQ(loaded->metadata->properties.at("k"), "v");
  ASSERT_THAT(cat_->RenameTable({"sales", "orders"}, {"sales", "orders2"}), IsOk());
  EXPECT_THAT(cat_->LoadTable({"sales", "orders"}), IsError(ErrorKind::kNotFound));
  EXPECT_THAT(cat_->ListTables("sales")->size(), 1u);
  ASSERT_THAT(cat_->DropTable({"sales", "orders2"}), IsOk());
  EXPECT_THAT(cat_->DropTable({"sales", "orders2"}), IsError(ErrorKind::kNotFound));
  auto log = cat_->CommitsSince(0);
  ASSERT_THAT(log, IsOk());
  std::vector<std::string> actions;
  for (const auto& e : *log) actions.push_back(e.action);
  EXPECT_THAT(actions, ElementsAre("create", "rename", "drop"));
}

TEST_F(CatalogTest, CommitIsCompareAndSwapAndLogged) {
  ASSERT_THAT(cat_->CreateNamespace("s"), IsOk());
  auto t = *cat_->CreateTable({"s", "t"}, SimpleSchema(), PartitionSpec(), {});
  std::string next = NextMetadataLocation(t.metadata->location, t.metadata_location);
  EXPECT_THAT(next, ::testing::HasSubstr("/metadata/00001-"));
  ASSERT_THAT(cat_->io().WriteNewFile(next, TableMetadataToJson(*t.metadata)), IsOk());
  auto seqs = cat_->Commit({TableCommit{{"s", "t"}, t.metadata_location, next, 42, "append"}});
  ASSERT_THAT(seqs, IsOk());
  // The same base again is stale now.
  auto stale = cat_->Commit({TableCommit{{"s", "t"}, t.metadata_location, next, 43, "append"}});
  EXPECT_THAT(stale, IsError(ErrorKind::kCommitConflict));
  auto log = *cat_->CommitsSince(0, TableIdent{"s", "t"});
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[1].commit_seq, (*seqs)[0]);
  EXPECT_EQ(log[1].snapshot_id, 42);
  EXPECT_EQ(log[1].operation, "append");
  EXPECT_EQ(log[1].engine, "skade");
  EXPECT_LT(log[0].commit_seq, log[1].commit_seq);
}

TEST_F(CatalogTest, CommitsBeforeListsNewestFirstBetweenExclusiveBounds) {
  ASSERT_THAT(cat_->CreateNamespace("s"), IsOk());
  for (const char* name : {"a", "b", "c", "d"})
    ASSERT_THAT(cat_->CreateTable({"s", name}, SimpleSchema(), PartitionSpec(), {}), IsOk());
  ASSERT_THAT(cat_->DropTable({"s", "b"}), IsOk());
  auto seqs = [](const std::vector<CommitLogEntry>& log) {
    std::vector<int64_t> out;
    for (const auto& e : log) out.push_back(e.commit_seq);
    return out;
  };
  std::vector<int64_t> all = seqs(*cat_->CommitsSince(0));
  ASSERT_EQ(all.size(), 5u);
  const int64_t kNone = std::numeric_limits<int64_t>::max();
  EXPECT_THAT(seqs(*cat_->CommitsBefore(kNone)), ElementsAre(all[4], all[3], all[2], all[1], all[0]));
  EXPECT_THAT(seqs(*cat_->CommitsBefore(kNone, 0, std::nullopt, 2)), ElementsAre(all[4], all[3]));
  // both bounds exclusive
  EXPECT_THAT(seqs(*cat_->CommitsBefore(all[3], all[0])), ElementsAre(all[2], all[1]));
  EXPECT_THAT(seqs(*cat_->CommitsBefore(all[0])), ::testing::IsEmpty());
  // one table's rows: b's create and drop
  auto b = *cat_->CommitsBefore(kNone, 0, TableIdent{"s", "b"});
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(b[0].action, "drop");
  EXPECT_EQ(b[1].action, "create");
  // the same rows as oldest first
  auto asc = *cat_->CommitsSince(0);
  auto desc = *cat_->CommitsBefore(kNone);
  for (size_t i = 0; i < asc.size(); ++i) {
    EXPECT_EQ(asc[i].commit_seq, desc[asc.size() - 1 - i].commit_seq);
    EXPECT_EQ(asc[i].table.ToString(), desc[asc.size() - 1 - i].table.ToString());
    EXPECT_EQ(asc[i].action, desc[asc.size() - 1 - i].action);
  }
}

TEST_F(CatalogTest, MultiTableCommitIsAllOrNothing) {
  ASSERT_THAT(cat_->CreateNamespace("s"), IsOk());
  auto a = *cat_->CreateTable({"s", "a"}, SimpleSchema(), PartitionSpec(), {});
  auto b = *cat_->CreateTable({"s", "b"}, SimpleSchema(), PartitionSpec(), {});
  std::string na = NextMetadataLocation(a.metadata->location, a.metadata_location);
  std::string nb = NextMetadataLocation(b.metadata->location, b.metadata_location);
  ASSERT_THAT(cat_->io().WriteNewFile(na, TableMetadataToJson(*a.metadata)), IsOk());
  ASSERT_THAT(cat_->io().WriteNewFile(nb, TableMetadataToJson(*b.metadata)), IsOk());
  // b's base is wrong: nothing may change, not even a.
  auto bad = cat_->Commit({TableCommit{{"s", "a"}, a.metadata_location, na, 1, "append"},
                           TableCommit{{"s", "b"}, "wrong", nb, 2, "append"}});
  EXPECT_THAT(bad, IsError(ErrorKind::kCommitConflict));
  EXPECT_EQ(cat_->LoadTable({"s", "a"})->metadata_location, a.metadata_location);
  EXPECT_EQ(cat_->CommitsSince(0)->size(), 2u);  // the two creates only
  auto good = cat_->Commit({TableCommit{{"s", "a"}, a.metadata_location, na, 1, "append"},
                            TableCommit{{"s", "b"}, b.metadata_location, nb, 2, "append"}});
  ASSERT_THAT(good, IsOk());
  ASSERT_EQ(good->size(), 2u);
  EXPECT_LT((*good)[0], (*good)[1]);
  EXPECT_EQ(cat_->LoadTable({"s", "b"})->metadata_location, nb);
}

TEST_F(CatalogTest, ListenersHearCommitsAfterDurability) {
  struct Capture : CommitListener {
    std::vector<CommitEvent> events;
    void OnCommit(const CommitEvent& e) override { events.push_back(e); }
  } capture;
  ASSERT_THAT(cat_->CreateNamespace("s"), IsOk());
  auto t = *cat_->CreateTable({"s", "t"}, SimpleSchema(), PartitionSpec(), {});
  cat_->AddListener(&capture);
  std::string next = NextMetadataLocation(t.metadata->location, t.metadata_location);
  ASSERT_THAT(cat_->io().WriteNewFile(next, TableMetadataToJson(*t.metadata)), IsOk());
  auto seqs = *cat_->Commit({TableCommit{{"s", "t"}, t.metadata_location, next, 7, "append"}});
  ASSERT_EQ(capture.events.size(), 1u);
  EXPECT_EQ(capture.events[0].commit_seq, seqs[0]);
  EXPECT_EQ(capture.events[0].snapshot_id, 7);
  cat_->RemoveListener(&capture);
}

TEST_F(CatalogTest, ListenersHearCreatesRenamesAndDropsToo) {
  struct Capture : CommitListener {
    std::vector<CommitEvent> events;
    void OnCommit(const CommitEvent& e) override { events.push_back(e); }
  } capture;
  cat_->AddListener(&capture);
  ASSERT_THAT(cat_->CreateNamespace("s"), IsOk());
  ASSERT_THAT(cat_->CreateTable({"s", "t"}, SimpleSchema(), PartitionSpec(), {}), IsOk());
  ASSERT_THAT(cat_->RenameTable({"s", "t"}, {"s", "u"}), IsOk());
  ASSERT_THAT(cat_->DropTable({"s", "u"}), IsOk());
  cat_->RemoveListener(&capture);
  auto log = *cat_->CommitsSince(0);
  ASSERT_EQ(capture.events.size(), 3u);
  ASSERT_EQ(log.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(capture.events[i].commit_seq, log[i].commit_seq);
    EXPECT_EQ(capture.events[i].table, log[i].table);
  }
  EXPECT_EQ(capture.events[0].operation, "create");
  EXPECT_EQ(capture.events[1].operation, "rename");
  EXPECT_EQ(capture.events[2].operation, "drop");
}

TEST_F(CatalogTest, CommitsOfOtherEnginesAreLoggedByTrigger) {
  ASSERT_THAT(cat_->CreateNamespace("s"), IsOk());
  auto t = *cat_->CreateTable({"s", "t"}, SimpleSchema(), PartitionSpec(), {});
  // Another engine swaps the pointer with plain SQL, as PyIceberg's SqlCatalog does.
  TableMetadata m = *t.metadata;
  Snapshot snap;
  snap.snapshot_id = 99;
  snap.sequence_number = 1;
  snap.timestamp_ms = NowMs();
  snap.manifest_list = m.location + "/metadata/snap.avro";
  snap.summary["operation"] = "append";
  m.snapshots.push_back(snap);
  m.current_snapshot_id = 99;
  std::string next = NextMetadataLocation(m.location, t.metadata_location);
  ASSERT_THAT(cat_->io().WriteNewFile(next, TableMetadataToJson(m)), IsOk());
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((dir_.path() + "/catalog.db").c_str(), &db), SQLITE_OK);
  std::string sql = "UPDATE iceberg_tables SET metadata_location='" + next +
                    "', previous_metadata_location='" + t.metadata_location + "' WHERE table_name='t'";
  ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  auto log = *cat_->CommitsSince(0);
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[1].engine, "external");
  EXPECT_EQ(log[1].snapshot_id, 99);
  EXPECT_EQ(log[1].operation, "append");
}

TEST_F(CatalogTest, CorruptMetadataNamesTheFile) {
  ASSERT_THAT(cat_->CreateNamespace("s"), IsOk());
  auto t = *cat_->CreateTable({"s", "t"}, SimpleSchema(), PartitionSpec(), {});
  std::string path = LocalPath(t.metadata_location);
  ASSERT_THAT(cat_->io().DeleteFile(path), IsOk());
  ASSERT_THAT(cat_->io().WriteNewFile(path, "{\"format-version\": 2, \"table-uu"), IsOk());
  auto loaded = cat_->LoadTable({"s", "t"});
  ASSERT_THAT(loaded, IsError(ErrorKind::kCorrupt));
  EXPECT_THAT(loaded.error().message, ::testing::HasSubstr(path));
}

TEST(TableIdentTest, Parse) {
  EXPECT_EQ(TableIdent::Parse("a.b")->ns, "a");
  EXPECT_EQ(TableIdent::Parse("a.b.c")->ns, "a.b");
  EXPECT_THAT(TableIdent::Parse("nodot"), IsError(ErrorKind::kInvalidArgument));
  EXPECT_THAT(TableIdent::Parse("a."), IsError(ErrorKind::kInvalidArgument));
}

}  // namespace
}  // namespace skade

namespace skade {
namespace {

using testing::IsError;
using testing::IsOk;

TEST(NamesTest, PartsAreCheckedInEveryPosition) {
  for (const char* ok : {"sales", "a.b.c", "s\xc3\xb8ren", "a-b_c 1"}) EXPECT_THAT(ValidateNamespaceName(ok), IsOk()) << ok;
  for (const char* bad : {"", ".", "..", "a..b", ".a", "a.", "a/b", "a\\b", "../x", "a\x01", "a\x7f", "catalog",
                          "\xff", "\xc0\xaf", "\xed\xa0\x80", "a\xc2\x85"})
    EXPECT_THAT(ValidateNamespaceName(bad), IsError(ErrorKind::kInvalidArgument)) << bad;
  EXPECT_THAT(ValidateTableName("orders"), IsOk());
  for (const char* bad : {"", "a.b", "..", "a/b", "a\nb"})
    EXPECT_THAT(ValidateTableName(bad), IsError(ErrorKind::kInvalidArgument)) << bad;
  EXPECT_THAT(ValidateTableName(std::string(kMaxNameBytes, 'x')), IsOk());
  EXPECT_THAT(ValidateTableName(std::string(kMaxNameBytes + 1, 'x')), IsError(ErrorKind::kInvalidArgument));
  EXPECT_THAT(TableIdent::Parse("db.a/b"), IsError(ErrorKind::kInvalidArgument));
}

TEST(CatalogOpenTest, OnlyCreateMakesAWarehouse) {
  testing::TempDir dir;
  std::string wh = dir.path() + "/wh";
  EXPECT_THAT(Catalog::Open(wh), IsError(ErrorKind::kNotFound));
  EXPECT_FALSE(std::filesystem::exists(wh));
  ASSERT_THAT(Catalog::Create(wh), IsOk());
  EXPECT_THAT(Catalog::Open(wh), IsOk());
}

TEST(CatalogOpenTest, EmptyOrForeignFilesAreNeverReinitialised) {
  testing::TempDir dir;
  std::string db = dir.path() + "/catalog.db";
  { std::ofstream(db).flush(); }
  EXPECT_THAT(Catalog::Create(dir.path()), IsError(ErrorKind::kCorrupt));
  EXPECT_EQ(std::filesystem::file_size(db), 0u);
  { std::ofstream(db) << "plain text, not a database"; }
  EXPECT_THAT(Catalog::Open(dir.path()), IsError(ErrorKind::kCorrupt));
}

// What `sql` returns as one integer, through a connection of its own.
int64_t QueryInt(const std::string& db, const char* sql) {
  sqlite3* conn = nullptr;
  EXPECT_EQ(sqlite3_open(db.c_str(), &conn), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(conn, sql, -1, &st, nullptr), SQLITE_OK) << sql;
  int64_t v = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
  sqlite3_finalize(st);
  sqlite3_close(conn);
  return v;
}

TEST(CatalogOpenTest, ACurrentCatalogOpensWhileAWriterHoldsTheLock) {
  testing::TempDir dir;
  ASSERT_THAT(Catalog::Create(dir.path()), IsOk());
  std::string db = dir.path() + "/catalog.db";
  sqlite3* writer = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &writer), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(writer, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);
  // Opening used to take the write lock too (and wait up to its 60 s busy timeout).
  auto opened = std::async(std::launch::async, [&] { return Catalog::Open(dir.path()); });
  bool quick = opened.wait_for(std::chrono::seconds(10)) == std::future_status::ready;
  sqlite3_exec(writer, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(writer);
  EXPECT_TRUE(quick) << "opening waited for the writer's lock";
  auto cat = opened.get();
  ASSERT_THAT(cat, IsOk());
  EXPECT_THAT((*cat)->ListNamespaces(), IsOk());
}

TEST(CatalogOpenTest, AnOlderCatalogIsMigratedOnce) {
  testing::TempDir dir;
  ASSERT_THAT(Catalog::Create(dir.path()), IsOk());
  std::string db = dir.path() + "/catalog.db";
  EXPECT_EQ(QueryInt(db, "PRAGMA user_version"), 1);
  // As an older build left it: no version mark, the commit log without lineage_event.
  sqlite3* conn = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &conn), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(conn, "ALTER TABLE skade_commit_log DROP COLUMN lineage_event; PRAGMA user_version = 0",
                         nullptr, nullptr, nullptr),
            SQLITE_OK)
      << sqlite3_errmsg(conn);
  sqlite3_close(conn);
  const char* has_column = "SELECT count(*) FROM pragma_table_info('skade_commit_log') WHERE name='lineage_event'";
  ASSERT_EQ(QueryInt(db, has_column), 0);
  auto cat = Catalog::Open(dir.path());
  ASSERT_THAT(cat, IsOk());
  EXPECT_EQ(QueryInt(db, has_column), 1);
  EXPECT_EQ(QueryInt(db, "PRAGMA user_version"), 1);
  ASSERT_THAT((*cat)->CreateNamespace("db"), IsOk());
  ASSERT_THAT((*cat)->CreateTable({"db", "t"}, SimpleSchema(), PartitionSpec(), {}), IsOk());
}

TEST_F(CatalogTest, CommitToACatalogFileRemovedOrReplacedFails) {
  ASSERT_THAT(cat_->CreateNamespace("db"), IsOk());
  std::string db = dir_.path() + "/catalog.db";
  std::filesystem::rename(db, db + ".moved");
  EXPECT_THAT(cat_->CreateNamespace("lost"), IsError(ErrorKind::kIoError));
  std::filesystem::copy_file(db + ".moved", db);  // a replacement at the same path
  EXPECT_THAT(cat_->CreateNamespace("lost"), IsError(ErrorKind::kIoError));
  std::filesystem::remove(db);
  std::filesystem::rename(db + ".moved", db);
  EXPECT_THAT(cat_->CreateNamespace("kept"), IsOk());
}

TEST_F(CatalogTest, DefaultLocationsAreUnique) {
  ASSERT_THAT(cat_->CreateNamespace("db"), IsOk());
  auto a = cat_->CreateTable({"db", "r"}, SimpleSchema(), PartitionSpec(), {});
  ASSERT_THAT(a, IsOk());
  ASSERT_THAT(cat_->RenameTable({"db", "r"}, {"db", "r2"}), IsOk());
  auto b = cat_->CreateTable({"db", "r"}, SimpleSchema(), PartitionSpec(), {});
  ASSERT_THAT(b, IsOk());
  EXPECT_NE(a->metadata->location, b->metadata->location);
  EXPECT_THAT(b->metadata->location, ::testing::StartsWith(a->metadata->location + "-"));
  EXPECT_THAT(cat_->CreateTable({"db", "x/y"}, SimpleSchema(), PartitionSpec(), {}),
              IsError(ErrorKind::kInvalidArgument));
}

}  // namespace
}  // namespace skade
