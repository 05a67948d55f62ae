#include "skade/catalog/catalog.h"

#include <sqlite3.h>

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <limits>

#include "skade/catalog/names.h"
#include "skade/catalog/sqlite_internal.h"
#include "skade/io/file_io.h"

namespace skade {
namespace {

using sqlite::Stmt;

// The Iceberg SQL catalog tables (PyIceberg's "V1" layout), then skade's commit log.
// Triggers make every change of iceberg_tables (by any engine) append a log row.
constexpr const char* kSchemaSql = R"sql(
CREATE TABLE IF NOT EXISTS iceberg_tables (
  catalog_name VARCHAR(255) NOT NULL,
  table_namespace VARCHAR(255) NOT NULL,
  table_name VARCHAR(255) NOT NULL,
  metadata_location VARCHAR(1000),
  previous_metadata_location VARCHAR(1000),
  iceberg_type VARCHAR(5),
  PRIMARY KEY (catalog_name, table_namespace, table_name));
CREATE TABLE IF NOT EXISTS iceberg_namespace_properties (
  catalog_name VARCHAR(255) NOT NULL,
  namespace VARCHAR(255) NOT NULL,
  property_key VARCHAR(255) NOT NULL,
  property_value VARCHAR(1000),
  PRIMARY KEY (catalog_name, namespace, property_key));
CREATE TABLE IF NOT EXISTS skade_lineage_inbox (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  event TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS skade_lineage_event_ids (
  event_id TEXT PRIMARY KEY) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS skade_lineage_runs (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  parent TEXT NOT NULL,
  run_id TEXT NOT NULL,
  run TEXT NOT NULL,
  UNIQUE (parent, run_id));
CREATE TABLE IF NOT EXISTS skade_commit_log (
  commit_seq INTEGER PRIMARY KEY AUTOINCREMENT,
  catalog_name TEXT NOT NULL,
  table_namespace TEXT NOT NULL,
  table_name TEXT NOT NULL,
  action TEXT NOT NULL,
  snapshot_id INTEGER,
  operation TEXT,
  previous_metadata_location TEXT,
  metadata_location TEXT,
  committed_at_ms INTEGER NOT NULL,
  engine TEXT NOT NULL DEFAULT 'external');
CREATE TRIGGER IF NOT EXISTS skade_log_create AFTER INSERT ON iceberg_tables BEGIN
  INSERT INTO skade_commit_log (catalog_name, table_namespace, table_name, action,
      metadata_location, committed_at_ms)
  VALUES (NEW.catalog_name, NEW.table_namespace, NEW.table_name, 'create', NEW.metadata_location,
      CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER));
END;
CREATE TRIGGER IF NOT EXISTS skade_log_commit AFTER UPDATE OF metadata_location ON iceberg_tables
WHEN NEW.metadata_location IS NOT OLD.metadata_location BEGIN
  INSERT INTO skade_commit_log (catalog_name, table_namespace, table_name, action,
      previous_metadata_location, metadata_location, committed_at_ms)
  VALUES (NEW.catalog_name, NEW.table_namespace, NEW.table_name, 'commit', OLD.metadata_location,
      NEW.metadata_location, CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER));
END;
CREATE TRIGGER IF NOT EXISTS skade_log_rename AFTER UPDATE OF table_namespace, table_name ON iceberg_tables
WHEN NEW.table_name IS NOT OLD.table_name OR NEW.table_namespace IS NOT OLD.table_namespace BEGIN
  INSERT INTO skade_commit_log (catalog_name, table_namespace, table_name, action, operation,
      previous_metadata_location, metadata_location, committed_at_ms)
  VALUES (NEW.catalog_name, NEW.table_namespace, NEW.table_name, 'rename',
      'from ' || OLD.table_namespace || '.' || OLD.table_name, OLD.metadata_location,
      NEW.metadata_location, CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER));
END;
CREATE TRIGGER IF NOT EXISTS skade_log_drop AFTER DELETE ON iceberg_tables BEGIN
  INSERT INTO skade_commit_log (catalog_name, table_namespace, table_name, action,
      previous_metadata_location, committed_at_ms)
  VALUES (OLD.catalog_name, OLD.table_namespace, OLD.table_name, 'drop', OLD.metadata_location,
      CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER));
END;
)sql";

// Holds the write lock for a transaction; rolls back unless committed.
thread_local ProvenanceSource* current_provenance_source = nullptr;

// A change's provenance: what the writer declared plus what the thread's scope adds.
CommitProvenance ResolveProvenance(const CommitProvenance& declared) {
  CommitProvenance out = declared;
  if (ProvenanceSource* source = ProvenanceSource::Current()) out.Merge(source->Provenance());
  return out;
}

// The catalog schema this build puts in place (kSchemaSql, then MigrateCommitLog),
// recorded in SQLite's user_version: a catalog at this version, or a newer build's,
// opens without a write transaction, so commands that only read never queue behind a
// writer's lock (nor parse the schema on every start). Bump it with each schema change.
constexpr int kSchemaVersion = 1;

// Warehouses created before lineage lack the annotation column.
Status MigrateCommitLog(sqlite3* db) {
  SKADE_ASSIGN_OR_RETURN(Stmt info, Stmt::Prepare(db, "SELECT 1 FROM pragma_table_info('skade_commit_log') "
                                                      "WHERE name='lineage_event'"));
  SKADE_ASSIGN_OR_RETURN(bool present, info.Step());
  if (present) return {};
  SKADE_ASSIGN_OR_RETURN(Stmt alter, Stmt::Prepare(db, "ALTER TABLE skade_commit_log ADD COLUMN lineage_event TEXT"));
  SKADE_RETURN_IF_ERROR(alter.Step());
  return {};
}

// The (integer, text) rows of a two-column query.
Result<std::vector<std::pair<int64_t, std::string>>> IntTextRows(Stmt& s) {
  std::vector<std::pair<int64_t, std::string>> out;
  while (true) {
    SKADE_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    out.emplace_back(s.Int(0), s.Text(1));
  }
  return out;
}

int ParseVersion(const std::string& location) {
  std::string file = std::filesystem::path(location).filename().string();
  int v = -1;
  auto dash = file.find('-');
  if (dash == std::string::npos) return -1;
  auto [p, ec] = std::from_chars(file.data(), file.data() + dash, v);
  return (ec == std::errc() && p == file.data() + dash) ? v : -1;
}

}  // namespace

// One write transaction on the catalog; its commit first checks that the catalog
// file is still the one the connection opened.
class CatalogWriteTxn {
 public:
  explicit CatalogWriteTxn(const Catalog& catalog) : catalog_(catalog), db_(catalog.db_) {}
  ~CatalogWriteTxn() {
    if (open_) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  }
  Status Begin() {
    if (sqlite3_exec(db_, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr) != SQLITE_OK)
      return sqlite::DbError(db_, "begin catalog transaction");
    open_ = true;
    return {};
  }
  Status Commit() {
    SKADE_RETURN_IF_ERROR(catalog_.CheckSameFile());
    int rc = sqlite3_exec(db_, "COMMIT", nullptr, nullptr, nullptr);
    if (rc != SQLITE_OK)
      return MakeError(ErrorKind::kCommitStateUnknown,
                       std::string("catalog commit failed: ") + sqlite::DbMessage(db_));
    open_ = false;
    return {};
  }

 private:
  const Catalog& catalog_;
  sqlite3* db_;
  bool open_ = false;
};

void CommitProvenance::Merge(const CommitProvenance& other) {
  if (actor.empty()) actor = other.actor;
  if (operation.empty()) operation = other.operation;
  for (const auto& in : other.inputs)
    if (std::find(inputs.begin(), inputs.end(), in) == inputs.end()) inputs.push_back(in);
}

ProvenanceSource* ProvenanceSource::Current() { return current_provenance_source; }

ScopedProvenanceSource::ScopedProvenanceSource(ProvenanceSource* source)
    : previous_(current_provenance_source) {
  current_provenance_source = source;
}

ScopedProvenanceSource::~ScopedProvenanceSource() { current_provenance_source = previous_; }

Result<TableIdent> TableIdent::Parse(std::string_view text) {
  auto dot = text.rfind('.');
  if (dot == std::string_view::npos || dot == 0 || dot + 1 == text.size())
    return InvalidArgument("table name '" + std::string(text.substr(0, 200)) +
                           "' must be namespace.name (e.g. sales.orders)");
  TableIdent ident{std::string(text.substr(0, dot)), std::string(text.substr(dot + 1))};
  SKADE_RETURN_IF_ERROR(ValidateNamespaceName(ident.ns));
  SKADE_RETURN_IF_ERROR(ValidateTableName(ident.name));
  return ident;
}

std::string NextMetadataLocation(const std::string& table_location, const std::string& current) {
  int next = current.empty() ? 0 : ParseVersion(current) + 1;
  if (next < 0) next = 0;
  char buf[16];
  snprintf(buf, sizeof buf, "%05d", next);
  return table_location + "/metadata/" + buf + "-" + NewUuid() + ".metadata.json";
}

Catalog::Catalog(std::string warehouse, std::string name, sqlite3* db, std::unique_ptr<FileIO> io)
    : warehouse_(std::move(warehouse)), name_(std::move(name)), db_(db), io_(std::move(io)) {}

Catalog::~Catalog() { sqlite3_close_v2(db_); }

Result<std::unique_ptr<Catalog>> Catalog::Open(const std::string& warehouse, const std::string& catalog_name) {
  return OpenImpl(warehouse, catalog_name, MakeLocalFileIO(), false);
}

Result<std::unique_ptr<Catalog>> Catalog::Open(const std::string& warehouse,
                                               const std::string& catalog_name, std::unique_ptr<FileIO> io) {
  return OpenImpl(warehouse, catalog_name, std::move(io), false);
}

Result<std::unique_ptr<Catalog>> Catalog::Create(const std::string& warehouse, const std::string& catalog_name) {
  return OpenImpl(warehouse, catalog_name, MakeLocalFileIO(), true);
}

Result<std::unique_ptr<Catalog>> Catalog::Create(const std::string& warehouse,
                                                 const std::string& catalog_name, std::unique_ptr<FileIO> io) {
  return OpenImpl(warehouse, catalog_name, std::move(io), true);
}

Result<std::unique_ptr<Catalog>> Catalog::OpenImpl(const std::string& warehouse, const std::string& catalog_name,
                                                   std::unique_ptr<FileIO> io, bool create) {
  std::error_code ec;
  std::string abs = std::filesystem::absolute(LocalPath(warehouse), ec).lexically_normal().string();
  if (ec) return IoError("warehouse " + warehouse + ": " + ec.message());
  while (abs.size() > 1 && abs.back() == '/') abs.pop_back();
  std::string path = abs + "/catalog.db";
  struct stat file {};
  bool exists = ::stat(path.c_str(), &file) == 0;
  if (!exists && !create) {
    if (::stat(abs.c_str(), &file) != 0)
      return NotFound("warehouse " + abs + " does not exist (create it with 'skade init')");
    return NotFound("warehouse " + abs + " has no catalog (" + path + "); create it with 'skade init'");
  }
  if (exists) {
    // An existing file must be a catalog already: SQLite would silently make an
    // empty or foreign-named file a new database, forgetting every table.
    if (!S_ISREG(file.st_mode)) return Corrupt("catalog " + path + " is not a regular file");
    if (file.st_size == 0)
      return Corrupt("catalog " + path + " is empty (0 bytes): not a catalog; restore it from a backup");
  } else {
    SKADE_RETURN_IF_ERROR(MakeDirs(abs));
  }
  sqlite3* db = nullptr;
  int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_FULLMUTEX | (exists ? 0 : SQLITE_OPEN_CREATE);
  if (sqlite3_open_v2(path.c_str(), &db, flags, nullptr) != SQLITE_OK) {
    std::string msg = db ? sqlite::DbMessage(db) : "out of memory";
    sqlite3_close_v2(db);
    return IoError("open catalog " + path + ": " + msg);
  }
  sqlite3_busy_timeout(db, 60000);
  std::unique_ptr<Catalog> cat(new Catalog(abs, catalog_name, db, std::move(io)));
  cat->db_path_ = path;
  if (exists) {
    // Reading the schema makes SQLite check the header: a truncated or foreign file
    // fails here, before anything is written.
    auto has = Stmt::Prepare(db, "SELECT 1 FROM sqlite_master WHERE type='table' AND name='iceberg_tables'");
    if (!has) return Corrupt("catalog " + path + " is not a SQLite database (" + has.error().message + ")");
    auto found = has->Step();
    if (!found) return Corrupt("catalog " + path + " cannot be read: " + found.error().message);
    if (!*found) return Corrupt("catalog " + path + " is a SQLite database without the Iceberg catalog table "
                                "iceberg_tables: not a catalog");
  }
  if (::stat(path.c_str(), &file) != 0) return IoError("catalog " + path + ": " + std::strerror(errno));
  cat->db_file_ = {static_cast<uint64_t>(file.st_dev), static_cast<uint64_t>(file.st_ino)};
  cat->io_->AllowWritesUnder(abs);
  SKADE_RETURN_IF_ERROR_CTX(cat->Exec("PRAGMA journal_mode=WAL"), path);
  SKADE_RETURN_IF_ERROR_CTX(cat->Exec("PRAGMA synchronous=FULL"), path);
  int64_t version = 0;
  {
    auto read = Stmt::Prepare(db, "PRAGMA user_version");
    if (!read) return Corrupt("catalog " + path + " cannot be read: " + read.error().message);
    auto row = read->Step();
    if (!row) return Corrupt("catalog " + path + " cannot be read: " + row.error().message);
    if (*row) version = read->Int(0);
  }
  if (version < kSchemaVersion) {
    CatalogWriteTxn txn(*cat);
    SKADE_RETURN_IF_ERROR_CTX(txn.Begin(), path);
    SKADE_RETURN_IF_ERROR_CTX(cat->Exec(kSchemaSql), path);
    SKADE_RETURN_IF_ERROR_CTX(MigrateCommitLog(db), path);
    std::string mark = "PRAGMA user_version = " + std::to_string(kSchemaVersion);
    SKADE_RETURN_IF_ERROR_CTX(cat->Exec(mark.c_str()), path);
    SKADE_RETURN_IF_ERROR_CTX(txn.Commit(), path);
  }
  return cat;
}

Status Catalog::CheckSameFile() const {
  struct stat now {};
  if (::stat(db_path_.c_str(), &now) != 0)
    return IoError("catalog " + db_path_ + " was removed after it was opened; nothing was committed");
  if (static_cast<uint64_t>(now.st_dev) != db_file_.dev || static_cast<uint64_t>(now.st_ino) != db_file_.ino)
    return IoError("catalog " + db_path_ + " was replaced after it was opened; nothing was committed");
  return {};
}

bool Catalog::IsCatalogFile(std::string_view path) const {
  std::string p = LocalPath(path);
  return p == db_path_ || p == db_path_ + "-wal" || p == db_path_ + "-shm" || p == db_path_ + "-journal";
}

Status Catalog::Exec(const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : "unknown error";
    sqlite3_free(err);
    if (int e = sqlite3_system_errno(db_)) msg += std::string(" (") + std::strerror(e) + ")";
    int code = sqlite3_errcode(db_);
    return MakeError(code == SQLITE_NOTADB || code == SQLITE_CORRUPT ? ErrorKind::kCorrupt
                                                                      : ErrorKind::kIoError,
                     "catalog: " + msg);
  }
  return {};
}

Result<std::vector<std::pair<TableIdent, std::string>>> Catalog::TableFolders() {
  std::lock_guard lock(mu_);
  SKADE_ASSIGN_OR_RETURN(Stmt s, Stmt::Prepare(db_,
      "SELECT table_namespace, table_name, metadata_location FROM iceberg_tables WHERE catalog_name=?1"));
  s.Bind(1, name_);
  std::vector<std::pair<TableIdent, std::string>> out;
  while (true) {
    SKADE_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    // Iceberg writers keep metadata in `<location>/metadata/`.
    std::filesystem::path meta(LocalPath(s.Text(2)));
    out.push_back({{s.Text(0), s.Text(1)}, meta.parent_path().parent_path().string()});
  }
  return out;
}

Result<std::string> Catalog::DefaultLocation(const TableIdent& ident) {
  SKADE_ASSIGN_OR_RETURN(auto folders, TableFolders());
  std::string base = warehouse_ + "/" + ident.ns + ".db/" + ident.name;
  auto taken = [&](const std::string& path) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) == 0) return true;
    for (const auto& [other, folder] : folders)
      if (IsInside(path, folder) || IsInside(folder, path)) return true;
    return false;
  };
  std::string path = base;
  while (taken(path)) path = base + "-" + NewUuid();
  return FileUri(path);
}

Result<bool> Catalog::NamespaceExists(std::string_view ns) {
  std::lock_guard lock(mu_);
  SKADE_ASSIGN_OR_RETURN(Stmt s, Stmt::Prepare(db_,
      "SELECT 1 FROM iceberg_namespace_properties WHERE catalog_name=?1 AND namespace=?2 "
      "UNION ALL SELECT 1 FROM iceberg_tables WHERE catalog_name=?1 AND "
      "(table_namespace=?2 OR table_namespace LIKE ?3 ESCAPE '!') LIMIT 1"));
  std::string like;
  for (char c : ns) {
    if (c == '!' || c == '%' || c == '_') like += '!';
    like += c;
  }
  s.Bind(1, name_).Bind(2, ns).Bind(3, like + ".%");
  return s.Step();
}

Status Catalog::CreateNamespace(std::string_view ns, const std::map<std::string, std::string>& props) {
  SKADE_RETURN_IF_ERROR(ValidateNamespaceName(ns));
  SKADE_ASSIGN_OR_RETURN(bool exists, NamespaceExists(ns));
  if (exists) return MakeError(ErrorKind::kAlreadyExists, "namespace '" + std::string(ns) + "' already exists");
  std::lock_guard lock(mu_);
  CatalogWriteTxn txn(*this);
  SKADE_RETURN_IF_ERROR(txn.Begin());
  auto all = props;
  all["exists"] = "true";
  for (const auto& [k, v] : all) {
    SKADE_ASSIGN_OR_RETURN(Stmt s, Stmt::Prepare(db_,
        "INSERT INTO iceberg_namespace_properties VALUES (?1, ?2, ?3, ?4)"));
    s.Bind(1, name_).Bind(2, ns).Bind(3, k).Bind(4, v);
    SKADE_RETURN_IF_ERROR(s.Step());
  }
  return txn.Commit();
}

Result<std::vector<std::string>> Catalog::ListNamespaces() {
  std::lock_guard lock(mu_);
  SKADE_ASSIGN_OR_RETURN(Stmt s, Stmt::Prepare(db_,
      "SELECT namespace FROM iceberg_namespace_properties WHERE catalog_name=?1 "
      "UNION SELECT table_namespace FROM iceberg_tables WHERE catalog_name=?1 ORDER BY 1"));
  s.Bind(1, name_);
  std::vector<std::string> out;
  while (true) {
    SKADE_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    out.push_back(s.Text(0));
  }
  return out;
}

Status Catalog::DropNamespace(std::string_view ns) {
  SKADE_ASSIGN_OR_RETURN(bool exists, NamespaceExists(ns));
  if (!exists) return NotFound("namespace '" + std::string(ns) + "' does not exist");
  SKADE_ASSIGN_OR_RETURN(auto tables, ListTables(ns));
  if (!tables.empty()) {
    std::string names;
    for (const auto& t : tables) names += (names.empty() ? "" : ", ") + t.ToString();
    return MakeError(ErrorKind::kNotEmpty,
                     "namespace '" + std::string(ns) + "' is not empty: " + names);
  }
  std::lock_guard lock(mu_);
  SKADE_ASSIGN_OR_RETURN(Stmt s, Stmt::Prepare(db_,
      "DELETE FROM iceberg_namespace_properties WHERE catalog_name=?1 AND namespace=?2"));
  s.Bind(1, name_).Bind(2, ns);
  SKADE_RETURN_IF_ERROR(s.Step());
  return {};
}

Result<std::map<std::string, std::string>> Catalog::NamespaceProperties(std::string_view ns) {
  SKADE_ASSIGN_OR_RETURN(bool exists, NamespaceExists(ns));
  if (!exists) return NotFound("namespace '" + std::string(ns) + "' does not exist");
  std::lock_guard lock(mu_);
  SKADE_ASSIGN_OR_RETURN(Stmt s, Stmt::Prepare(db_,
      "SELECT property_key, property_value FROM iceberg_namespace_properties WHERE catalog_name=?1 AND "
      "namespace=?2 AND property_key != 'exists'"));
  s.Bind(1, name_).Bind(2, ns);
  std::map<std::string, std::string> out;
  while (true) {
    SKADE_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    out[s.Text(0)] = s.Text(1);
  }
  return out;
}

Result<std::vector<std::string>> Catalog::UpdateNamespaceProperties(
    std::string_view ns, const std::vector<std::string>& removals, const std::map<std::string, std::string>& updates) {
  for (const auto& k : removals)
    if (updates.contains(k)) return InvalidArgument("property '" + k + "' is both updated and removed");
  SKADE_ASSIGN_OR_RETURN(auto current, NamespaceProperties(ns));
  std::vector<std::string> missing;
  std::lock_guard lock(mu_);
  CatalogWriteTxn txn(*this);
  SKADE_RETURN_IF_ERROR(txn.Begin());
  for (const auto& k : removals) {
    if (!current.contains(k) || k == "exists") {
      missing.push_back(k);
      continue;
    }
    SKADE_ASSIGN_OR_RETURN(Stmt s, Stmt::Prepare(db_,
        "DELETE FROM iceberg_namespace_properties WHERE catalog_name=?1 AND namespace=?2 AND property_key=?3"));
    s.Bind(1, name_).Bind(2, ns).Bind(3, k);
    SKADE_RETURN_IF_ERROR(s.Step());
  }
  for (const auto& [k, v] : updates) {
    SKADE_ASSIGN_OR_RETURN(Stmt s, Stmt::Prepare(db_,
        "INSERT INTO iceberg_namespace_properties VALUES (?1, ?2, ?3, ?4) "
        "ON CONFLICT (catalog_name, namespace, property_key) DO UPDATE SET property_value=excluded.property_value"));
    s.Bind(1, name_).Bind(2, ns).Bind(3, k).Bind(4, v);
    SKADE_RETURN_IF_ERROR(s.Step());
  }
  // A namespace known only through its tables gets its marker row now.
  SKADE_ASSIGN_OR_RETURN(Stmt mark, Stmt::Prepare(db_,
      "INSERT OR IGNORE INTO iceberg_namespace_properties VALUES (?1, ?2, 'exists', 'true')"));
  mark.Bind(1, name_).Bind(2, ns);
  SKADE_RETURN_IF_ERROR(mark.Step());
  SKADE_RETURN_IF_ERROR(txn.Commit());
  return missing;
}

Result<std::vector<TableIdent>> Catalog::ListTables(std::optional<std::string_view> ns) {
  std::lock_guard lock(mu_);
  SKADE_ASSIGN_OR_RETURN(Stmt s, Stmt::Prepare(db_,
      ns ? "SELECT table_namespace, table_name FROM iceberg_tables WHERE catalog_name=?1 AND "
           "table_namespace=?2 AND (iceberg_type='TABLE' OR iceberg_type IS NULL) ORDER BY 1, 2"
         : "SELECT table_namespace, table_name FROM iceberg_tables WHERE catalog_name=?1 AND "
           "(iceberg_type='TABLE' OR iceberg_type IS NULL) ORDER BY 1, 2"));
  s.Bind(1, name_);
  if (ns) s.Bind(2, *ns);
  std::vector<TableIdent> out;
  while (true) {
    SKADE_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    out.push_back({s.Text(0), s.Text(1)});
  }
  return out;
}

Result<std::optional<std::string>> Catalog::CurrentLocation(const TableIdent& ident) {
  SKADE_ASSIGN_OR_RETURN(Stmt s, Stmt::Prepare(db_,
      "SELECT metadata_location FROM iceberg_tables WHERE catalog_name=?1 AND "
      "table_namespace=?2 AND table_name=?3 AND (iceberg_type='TABLE' OR iceberg_type IS NULL)"));
  s.Bind(1, name_).Bind(2, ident.ns).Bind(3, ident.name);
  SKADE_ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return std::optional<std::string>();
  return std::optional<std::string>(s.Text(0));
}

Status Catalog::CheckNewTable(const TableIdent& ident) {
  SKADE_RETURN_IF_ERROR(ValidateNamespaceName(ident.ns));
  SKADE_RETURN_IF_ERROR(ValidateTableName(ident.name));
  SKADE_ASSIGN_OR_RETURN(bool ns_exists, NamespaceExists(ident.ns));
  if (!ns_exists)
    return NotFound("namespace '" + ident.ns + "' does not exist (create it with create-namespace)");
  std::lock_guard lock(mu_);
  SKADE_ASSIGN_OR_RETURN(auto loc, CurrentLocation(ident));
  if (loc) return MakeError(ErrorKind::kAlreadyExists, "table " + ident.ToString() + " already exists");
  return {};
}

Result<LoadedTable> Catalog::CreateTable(const TableIdent& ident, const Schema& schema,
                                         const PartitionSpec& spec,
                                         const std::map<std::string, std::string>& properties,
                                         const CommitProvenance& provenance) {
  SKADE_RETURN_IF_ERROR(CheckNewTable(ident));
  SKADE_RETURN_IF_ERROR(spec.PartitionType(schema));
  auto m = std::make_shared<TableMetadata>();
  m->table_uuid = NewUuid();
  SKADE_ASSIGN_OR_RETURN(m->location, DefaultLocation(ident));
  m->last_updated_ms = NowMs();
  m->last_column_id = schema.HighestFieldId();
  m->schemas.push_back(std::make_shared<Schema>(schema));
  m->current_schema_id = schema.schema_id();
  m->specs.push_back(spec);
  m->default_spec_id = spec.spec_id();
  m->last_partition_id = spec.LastFieldId();
  // Consumed at create, as Java does: the version lives in the metadata, not its properties.
  if (auto v = properties.find("format-version"); v != properties.end() && v->second == "3") {
    m->format_version = 3;
    m->next_row_id = 0;
  }
  m->properties = properties;
  m->properties.erase("format-version");
  return CreateTable(ident, m, provenance);
}

Result<LoadedTable> Catalog::CreateTable(const TableIdent& ident, TableMetadataPtr metadata,
                                         const CommitProvenance& provenance) {
  SKADE_RETURN_IF_ERROR(CheckNewTable(ident));
  if (const SchemaPtr& schema = metadata->schema(); schema)
    SKADE_RETURN_IF_ERROR(CheckTypesForFormat(*schema, metadata->format_version));
  // The caller chose the location (a REST server vets it); its files may be written.
  if (!IsInside(warehouse_, metadata->location)) io_->AllowWritesUnder(metadata->location);
  std::string location = NextMetadataLocation(metadata->location, "");
  SKADE_RETURN_IF_ERROR(io_->WriteNewFile(location, TableMetadataToJson(*metadata)));
  auto created = InsertTable(ident, location, metadata, provenance);
  if (!created) (void)io_->DeleteFile(location);
  return created;
}

Result<LoadedTable> Catalog::RegisterTable(const TableIdent& ident, const std::string& metadata_location,
                                           const CommitProvenance& provenance) {
  SKADE_RETURN_IF_ERROR(CheckNewTable(ident));
  SKADE_ASSIGN_OR_RETURN(std::string text, io_->ReadFile(metadata_location));
  auto parsed = ParseTableMetadata(text);
  if (!parsed) return std::unexpected(std::move(parsed).error().WithContext(LocalPath(metadata_location)));
  return InsertTable(ident, metadata_location, std::make_shared<TableMetadata>(std::move(*parsed)), provenance);
}

Result<LoadedTable> Catalog::InsertTable(const TableIdent& ident, const std::string& location,
                                         TableMetadataPtr m, const CommitProvenance& provenance) {
  CommitRecord record;
  std::string annotation;
  {
    std::lock_guard lock(mu_);
    CatalogWriteTxn txn(*this);
    SKADE_RETURN_IF_ERROR(txn.Begin());
    SKADE_ASSIGN_OR_RETURN(Stmt s, Stmt::Prepare(db_,
        "INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name, metadata_location, "
        "previous_metadata_location, iceberg_type) VALUES (?1, ?2, ?3, ?4, NULL, 'TABLE')"));
    s.Bind(1, name_).Bind(2, ident.ns).Bind(3, ident.name).Bind(4, location);
    if (auto r = s.Step(); !r) {
      if (sqlite3_extended_errcode(db_) == SQLITE_CONSTRAINT_PRIMARYKEY)
        return MakeError(ErrorKind::kAlreadyExists, "table " + ident.ToString() + " already exists");
      return std::unexpected(r.error());
    }
    int64_t ts = NowMs();
    // A create that carries its first snapshot (a CTAS through skade serve) is logged
    // with what that snapshot did and the engine its summary names, as foreign ones are.
    std::string operation = "create", engine = "skade";
    if (const Snapshot* snap = m->CurrentSnapshot()) {
      operation = snap->operation();
      if (auto it = snap->summary.find("engine-name"); it != snap->summary.end() && !it->second.empty())
        engine = it->second;
    }
    SKADE_ASSIGN_OR_RETURN(int64_t seq, ClaimLogRow(m->current_snapshot_id, operation, ts, engine));
    record = {{{ident, "create", "create", m->current_snapshot_id, seq, std::nullopt}}, ts,
              ResolveProvenance(provenance)};
    SKADE_ASSIGN_OR_RETURN(annotation, AnnotateInTxn(record));
    SKADE_RETURN_IF_ERROR(txn.Commit());
  }
  AfterDurable(record, annotation);
  return LoadedTable{ident, location, m};
}

Result<std::optional<std::string>> Catalog::MetadataLocation(const TableIdent& ident) {
  std::lock_guard lock(mu_);
  return CurrentLocation(ident);
}

Result<LoadedTable> Catalog::LoadTable(const TableIdent& ident) {
  std::optional<std::string> loc;
  {
    std::lock_guard lock(mu_);
    SKADE_ASSIGN_OR_RETURN(loc, CurrentLocation(ident));
  }
  if (!loc) return NotFound("table " + ident.ToString() + " does not exist");
  SKADE_ASSIGN_OR_RETURN(std::string text, io_->ReadFile(*loc));
  auto parsed = ParseTableMetadata(text);
  if (!parsed) return std::unexpected(std::move(parsed).error().WithContext(LocalPath(*loc)));
  // A table another engine placed outside the warehouse is written in its own folder;
  // a location that holds the warehouse itself is never opened for writes.
  if (!IsInside(warehouse_, parsed->location)) io_->AllowWritesUnder(parsed->location);
  return LoadedTable{ident, *loc, std::make_shared<TableMetadata>(std::move(*parsed))};
}

Status Catalog::DropTable(const TableIdent& ident, const CommitProvenance& provenance) {
  CommitRecord record;
  std::string annotation;
  {
    std::lock_guard lock(mu_);
    CatalogWriteTxn txn(*this);
    SKADE_RETURN_IF_ERROR(txn.Begin());
    SKADE_ASSIGN_OR_RETURN(Stmt s, Stmt::Prepare(db_,
        "DELETE FROM iceberg_tables WHERE catalog_name=?1 AND table_namespace=?2 AND table_name=?3"));
    s.Bind(1, name_).Bind(2, ident.ns).Bind(3, ident.name);
    SKADE_RETURN_IF_ERROR(s.Step());
    if (sqlite3_changes(db_) == 0) return NotFound("table " + ident.ToString() + " does not exist");
    int64_t now = NowMs();
    SKADE_ASSIGN_OR_RETURN(int64_t seq, ClaimLogRow(std::nullopt, std::nullopt, now));
    record = {{{ident, "drop", "drop", std::nullopt, seq, std::nullopt}}, now, ResolveProvenance(provenance)};
    SKADE_ASSIGN_OR_RETURN(annotation, AnnotateInTxn(record));
    SKADE_RETURN_IF_ERROR(txn.Commit());
  }
  AfterDurable(record, annotation);
  return {};
}

Status Catalog::RenameTable(const TableIdent& from, const TableIdent& to,
                            const CommitProvenance& provenance) {
  SKADE_RETURN_IF_ERROR(ValidateNamespaceName(to.ns));
  SKADE_RETURN_IF_ERROR(ValidateTableName(to.name));
  SKADE_ASSIGN_OR_RETURN(bool ns_exists, NamespaceExists(to.ns));
  if (!ns_exists) return NotFound("namespace '" + to.ns + "' does not exist");
  CommitRecord record;
  std::string annotation;
  {
    std::lock_guard lock(mu_);
    CatalogWriteTxn txn(*this);
    SKADE_RETURN_IF_ERROR(txn.Begin());
    SKADE_ASSIGN_OR_RETURN(auto existing, CurrentLocation(to));
    if (existing) return MakeError(ErrorKind::kAlreadyExists, "table " + to.ToString() + " already exists");
    SKADE_ASSIGN_OR_RETURN(Stmt s, Stmt::Prepare(db_,
        "UPDATE iceberg_tables SET table_namespace=?4, table_name=?5 WHERE catalog_name=?1 AND "
        "table_namespace=?2 AND table_name=?3"));
    s.Bind(1, name_).Bind(2, from.ns).Bind(3, from.name).Bind(4, to.ns).Bind(5, to.name);
    SKADE_RETURN_IF_ERROR(s.Step());
    if (sqlite3_changes(db_) == 0) return NotFound("table " + from.ToString() + " does not exist");
    int64_t now = NowMs();
    SKADE_ASSIGN_OR_RETURN(int64_t seq, ClaimLogRow(std::nullopt, std::nullopt, now));
    record = {{{to, "rename", "rename", std::nullopt, seq, from}}, now, ResolveProvenance(provenance)};
    SKADE_ASSIGN_OR_RETURN(annotation, AnnotateInTxn(record));
    SKADE_RETURN_IF_ERROR(txn.Commit());
  }
  AfterDurable(record, annotation);
  return {};
}

Result<std::vector<int64_t>> Catalog::Commit(const std::vector<TableCommit>& commits) {
  if (commits.empty()) return InvalidArgument("commit of no tables");
  std::vector<int64_t> seqs;
  int64_t now = NowMs();
  CommitRecord record;
  record.ts_ms = now;
  for (const auto& c : commits) record.provenance.Merge(c.provenance);
  record.provenance = ResolveProvenance(record.provenance);
  std::string annotation;
  {
    std::lock_guard lock(mu_);
    CatalogWriteTxn txn(*this);
    SKADE_RETURN_IF_ERROR(txn.Begin());
    for (const auto& c : commits) {
      SKADE_ASSIGN_OR_RETURN(Stmt s, Stmt::Prepare(db_,
          "UPDATE iceberg_tables SET metadata_location=?4, previous_metadata_location=?5 "
          "WHERE catalog_name=?1 AND table_namespace=?2 AND table_name=?3 AND metadata_location=?5"));
      s.Bind(1, name_).Bind(2, c.table.ns).Bind(3, c.table.name).Bind(4, c.new_location)
          .Bind(5, c.base_location);
      SKADE_RETURN_IF_ERROR(s.Step());
      if (sqlite3_changes(db_) != 1) {
        SKADE_ASSIGN_OR_RETURN(auto cur, CurrentLocation(c.table));
        if (!cur) return NotFound("table " + c.table.ToString() + " does not exist");
        return MakeError(ErrorKind::kCommitConflict,
                         "table " + c.table.ToString() + " was changed by another commit");
      }
      SKADE_ASSIGN_OR_RETURN(int64_t seq,
                             ClaimLogRow(c.snapshot_id, c.operation, now, c.engine.empty() ? "skade" : c.engine));
      seqs.push_back(seq);
      record.changes.push_back({c.table, "commit", c.operation, c.snapshot_id, seq, std::nullopt});
    }
    SKADE_ASSIGN_OR_RETURN(annotation, AnnotateInTxn(record));
    SKADE_RETURN_IF_ERROR(txn.Commit());
  }
  AfterDurable(record, annotation);
  return seqs;
}

Result<int64_t> Catalog::ClaimLogRow(std::optional<int64_t> snapshot_id, std::optional<std::string> operation,
                                     std::optional<int64_t> ts_ms, const std::string& engine) {
  // The trigger just logged this transaction's change; mark it as skade's and add
  // what only skade knows. Inside the write transaction, the newest row is ours.
  SKADE_ASSIGN_OR_RETURN(Stmt mark, Stmt::Prepare(db_,
      "UPDATE skade_commit_log SET engine=?4, snapshot_id=COALESCE(?1, snapshot_id), "
      "operation=COALESCE(?2, operation), committed_at_ms=COALESCE(?3, committed_at_ms) "
      "WHERE commit_seq=(SELECT max(commit_seq) FROM skade_commit_log) RETURNING commit_seq"));
  mark.Bind(1, snapshot_id).Bind(3, ts_ms).Bind(4, engine);
  if (operation) mark.Bind(2, *operation);
  else mark.BindNull(2);
  SKADE_ASSIGN_OR_RETURN(bool row, mark.Step());
  if (!row) return Internal("the commit log trigger did not record the change");
  return mark.Int(0);
}

Result<std::string> Catalog::AnnotateInTxn(CommitRecord& record) {
  CommitAnnotator* annotator = annotator_.load();
  if (!annotator) return std::string();
  std::optional<std::string> annotation = annotator->Annotate(record);
  if (!annotation) return std::string();
  SKADE_ASSIGN_OR_RETURN(Stmt s, Stmt::Prepare(db_, "UPDATE skade_commit_log SET lineage_event=?1 WHERE commit_seq=?2"));
  s.Bind(1, *annotation).Bind(2, record.changes.back().commit_seq);
  SKADE_RETURN_IF_ERROR(s.Step());
  return *annotation;
}

void Catalog::AfterDurable(const CommitRecord& record, const std::string& annotation) {
  // The post-commit hook of every catalog change (commits, creates, drops, renames);
  // nothing here can fail or undo the change.
  if (!annotation.empty())
    if (CommitAnnotator* annotator = annotator_.load()) annotator->OnDurable(record, annotation);
  std::vector<CommitListener*> listeners;
  {
    std::lock_guard lock(listeners_mu_);
    listeners = listeners_;
  }
  for (const auto& c : record.changes) {
    CommitEvent ev{c.table, c.snapshot_id, c.commit_seq, record.ts_ms, c.operation};
    for (auto* l : listeners) l->OnCommit(ev);
  }
}

void Catalog::SetAnnotator(CommitAnnotator* annotator) { annotator_.store(annotator); }

Result<std::vector<std::pair<int64_t, std::string>>> Catalog::AnnotationsSince(int64_t after_seq) {
  std::lock_guard lock(mu_);
  SKADE_ASSIGN_OR_RETURN(Stmt s, Stmt::Prepare(db_,
      "SELECT commit_seq, lineage_event FROM skade_commit_log WHERE catalog_name=?1 AND commit_seq > ?2 "
      "AND lineage_event IS NOT NULL ORDER BY commit_seq"));
  s.Bind(1, name_).Bind(2, after_seq);
  return IntTextRows(s);
}

Result<std::vector<CommitLogEntry>> Catalog::CommitsSince(int64_t after_seq,
                                                          std::optional<TableIdent> table,
                                                          int64_t limit) {
  return CommitRows(false, after_seq, std::numeric_limits<int64_t>::max(), table, limit);
}

Result<std::vector<CommitLogEntry>> Catalog::CommitsBefore(int64_t before_seq, int64_t after_seq,
                                                           std::optional<TableIdent> table,
                                                           int64_t limit) {
  return CommitRows(true, after_seq, before_seq, table, limit);
}

Result<std::vector<CommitLogEntry>> Catalog::CommitRows(bool newest_first, int64_t after_seq,
                                                        int64_t before_seq,
                                                        const std::optional<TableIdent>& table,
                                                        int64_t limit) {
  std::vector<CommitLogEntry> out;
  {
    std::lock_guard lock(mu_);
    std::string sql =
        "SELECT commit_seq, table_namespace, table_name, action, snapshot_id, operation, "
        "previous_metadata_location, metadata_location, committed_at_ms, engine, lineage_event "
        "FROM skade_commit_log WHERE catalog_name=?1 AND commit_seq > ?2 AND commit_seq < ?6 "
        "AND (?3 IS NULL OR (table_namespace=?3 AND table_name=?4)) ORDER BY commit_seq ";
    sql += newest_first ? "DESC LIMIT ?5" : "LIMIT ?5";
    SKADE_ASSIGN_OR_RETURN(Stmt s, Stmt::Prepare(db_, sql));
    s.Bind(1, name_).Bind(2, after_seq).Bind(5, limit).Bind(6, before_seq);
    if (table) s.Bind(3, table->ns).Bind(4, table->name);
    else s.BindNull(3).BindNull(4);
    while (true) {
      SKADE_ASSIGN_OR_RETURN(bool row, s.Step());
      if (!row) break;
      CommitLogEntry e;
      e.commit_seq = s.Int(0);
      e.table = {s.Text(1), s.Text(2)};
      e.action = s.Text(3);
      if (!s.IsNull(4)) e.snapshot_id = s.Int(4);
      e.operation = s.Text(5);
      e.previous_metadata_location = s.Text(6);
      e.metadata_location = s.Text(7);
      e.committed_at_ms = s.Int(8);
      e.engine = s.Text(9);
      e.lineage_event = s.Text(10);
      out.push_back(std::move(e));
    }
  }
  // Commits by other engines: the metadata file they wrote tells what they did, and
  // its snapshot's summary which engine it was (`engine-name`, as Spark writes it).
  for (auto& e : out) {
    if (e.engine == "skade" || (e.action != "commit" && e.action != "create") || e.snapshot_id) continue;
    auto text = io_->ReadFile(e.metadata_location);
    if (!text) continue;
    auto m = ParseTableMetadata(*text);
    if (!m) continue;
    e.snapshot_id = m->current_snapshot_id;
    const Snapshot* snap = m->CurrentSnapshot();
    auto name_engine = [&] {
      if (!snap) return;
      if (auto it = snap->summary.find("engine-name"); it != snap->summary.end() && !it->second.empty())
        e.engine = it->second;
    };
    if (e.action == "create") {  // a create with a first snapshot (CTAS)
      e.operation = snap ? snap->operation() : "create";
      name_engine();
      continue;
    }
    // A commit that kept the current snapshot changed metadata only (schema, spec,
    // refs, properties); one that moved it did what that snapshot says.
    std::optional<TableMetadata> prev;
    if (!e.previous_metadata_location.empty())
      if (auto ptext = io_->ReadFile(e.previous_metadata_location))
        if (auto pm = ParseTableMetadata(*ptext)) prev = std::move(*pm);
    if (prev && prev->current_snapshot_id == m->current_snapshot_id) {
      e.operation = prev->current_schema_id != m->current_schema_id ? "schema-change"
                    : prev->default_spec_id != m->default_spec_id    ? "partition-change"
                                                                     : "metadata-change";
    } else if (snap) {
      e.operation = snap->operation();
      name_engine();
    }
  }
  return out;
}

Result<int64_t> Catalog::AddToLineageInbox(const std::vector<std::string>& events) {
  std::lock_guard lock(mu_);
  CatalogWriteTxn txn(*this);
  SKADE_RETURN_IF_ERROR(txn.Begin());
  for (const auto& e : events) {
    SKADE_ASSIGN_OR_RETURN(Stmt s, Stmt::Prepare(db_, "INSERT INTO skade_lineage_inbox (event) VALUES (?1)"));
    s.Bind(1, e);
    SKADE_RETURN_IF_ERROR(s.Step());
  }
  int64_t last = sqlite3_last_insert_rowid(db_);
  SKADE_RETURN_IF_ERROR(txn.Commit());
  return last;
}

Result<std::vector<std::pair<int64_t, std::string>>> Catalog::LineageInboxSince(int64_t after_seq) {
  std::lock_guard lock(mu_);
  SKADE_ASSIGN_OR_RETURN(Stmt s, Stmt::Prepare(db_, "SELECT seq, event FROM skade_lineage_inbox WHERE seq > ?1 ORDER BY seq"));
  s.Bind(1, after_seq);
  return IntTextRows(s);
}

Status Catalog::TrimLineageInbox(int64_t through_seq) {
  std::lock_guard lock(mu_);
  SKADE_ASSIGN_OR_RETURN(Stmt s, Stmt::Prepare(db_, "DELETE FROM skade_lineage_inbox WHERE seq <= ?1"));
  s.Bind(1, through_seq);
  SKADE_RETURN_IF_ERROR(s.Step());
  return {};
}

Result<int64_t> Catalog::CountLineageInboxSince(int64_t after_seq) {
  std::lock_guard lock(mu_);
  SKADE_ASSIGN_OR_RETURN(Stmt s, Stmt::Prepare(db_, "SELECT count(*) FROM skade_lineage_inbox WHERE seq > ?1"));
  s.Bind(1, after_seq);
  SKADE_RETURN_IF_ERROR(s.Step());
  return s.Int(0);
}

Result<std::vector<std::string>> Catalog::UnknownLineageEventIds(const std::vector<std::string>& ids) {
  std::lock_guard lock(mu_);
  SKADE_ASSIGN_OR_RETURN(Stmt s, Stmt::Prepare(db_, "SELECT 1 FROM skade_lineage_event_ids WHERE event_id = ?1"));
  std::vector<std::string> unknown;
  for (const auto& id : ids) {
    s.Bind(1, id);
    SKADE_ASSIGN_OR_RETURN(bool known, s.Step());
    if (!known) unknown.push_back(id);
    s.Reset();
  }
  return unknown;
}

Status Catalog::RecordLineageEventIds(const std::vector<std::string>& ids, bool replace_all) {
  std::lock_guard lock(mu_);
  CatalogWriteTxn txn(*this);
  SKADE_RETURN_IF_ERROR(txn.Begin());
  if (replace_all) {
    SKADE_ASSIGN_OR_RETURN(Stmt clear, Stmt::Prepare(db_, "DELETE FROM skade_lineage_event_ids"));
    SKADE_RETURN_IF_ERROR(clear.Step());
  }
  SKADE_ASSIGN_OR_RETURN(Stmt s, Stmt::Prepare(db_, "INSERT OR IGNORE INTO skade_lineage_event_ids VALUES (?1)"));
  for (const auto& id : ids) {
    s.Bind(1, id);
    SKADE_RETURN_IF_ERROR(s.Step());
    s.Reset();
  }
  return txn.Commit();
}

Status Catalog::RememberLineageRun(const std::string& parent, const std::string& run_id, const std::string& run,
                                   int64_t runs_per_parent, int64_t parents) {
  std::lock_guard lock(mu_);
  CatalogWriteTxn txn(*this);
  SKADE_RETURN_IF_ERROR(txn.Begin());
  // REPLACE gives the run a new seq: it is now its parent's newest.
  SKADE_ASSIGN_OR_RETURN(Stmt put, Stmt::Prepare(db_, "INSERT OR REPLACE INTO skade_lineage_runs (parent, run_id, run) "
                                                      "VALUES (?1, ?2, ?3)"));
  put.Bind(1, parent).Bind(2, run_id).Bind(3, run);
  SKADE_RETURN_IF_ERROR(put.Step());
  SKADE_ASSIGN_OR_RETURN(Stmt trim_runs, Stmt::Prepare(db_,
      "DELETE FROM skade_lineage_runs WHERE parent = ?1 AND seq NOT IN "
      "(SELECT seq FROM skade_lineage_runs WHERE parent = ?1 ORDER BY seq DESC LIMIT ?2)"));
  trim_runs.Bind(1, parent).Bind(2, runs_per_parent);
  SKADE_RETURN_IF_ERROR(trim_runs.Step());
  SKADE_ASSIGN_OR_RETURN(Stmt trim_parents, Stmt::Prepare(db_,
      "DELETE FROM skade_lineage_runs WHERE parent NOT IN (SELECT parent FROM skade_lineage_runs "
      "GROUP BY parent ORDER BY max(seq) DESC LIMIT ?1)"));
  trim_parents.Bind(1, parents);
  SKADE_RETURN_IF_ERROR(trim_parents.Step());
  return txn.Commit();
}

Result<std::vector<std::string>> Catalog::LineageRunsOf(const std::string& parent) {
  std::lock_guard lock(mu_);
  SKADE_ASSIGN_OR_RETURN(Stmt s, Stmt::Prepare(db_, "SELECT seq, run FROM skade_lineage_runs WHERE parent = ?1 "
                                                    "ORDER BY seq"));
  s.Bind(1, parent);
  SKADE_ASSIGN_OR_RETURN(auto rows, IntTextRows(s));
  std::vector<std::string> out;
  for (auto& [seq, run] : rows) out.push_back(std::move(run));
  return out;
}

void Catalog::AddListener(CommitListener* listener) {
  std::lock_guard lock(listeners_mu_);
  listeners_.push_back(listener);
}

void Catalog::RemoveListener(CommitListener* listener) {
  std::lock_guard lock(listeners_mu_);
  std::erase(listeners_, listener);
}

}  // namespace skade
