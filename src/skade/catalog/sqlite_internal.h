// A thin RAII layer over SQLite statements; SQLite errors become skade errors here.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include "skade/common/result.h"

namespace skade::sqlite {

/// SQLite's message, plus the operating system's reason where one caused it
/// ("disk I/O error (No space left on device)").
inline std::string DbMessage(sqlite3* db) {
  std::string msg = sqlite3_errmsg(db);
  if (int e = sqlite3_system_errno(db)) msg += std::string(" (") + std::strerror(e) + ")";
  return msg;
}

inline std::unexpected<Error> DbError(sqlite3* db, std::string_view what) {
  int code = sqlite3_extended_errcode(db);
  ErrorKind kind = (code & 0xff) == SQLITE_CORRUPT || (code & 0xff) == SQLITE_NOTADB
                       ? ErrorKind::kCorrupt
                       : ErrorKind::kIoError;
  return MakeError(kind, std::string(what) + ": " + DbMessage(db));
}

class Stmt {
 public:
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  Stmt(Stmt&& o) noexcept : db_(o.db_), stmt_(o.stmt_) { o.stmt_ = nullptr; }
  ~Stmt() { sqlite3_finalize(stmt_); }

  static Result<Stmt> Prepare(sqlite3* db, std::string_view sql) {
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()), &s, nullptr) != SQLITE_OK)
      return DbError(db, "catalog query");
    return Stmt(db, s);
  }

  Stmt& Bind(int i, std::string_view v) {
    sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Stmt& Bind(int i, int64_t v) {
    sqlite3_bind_int64(stmt_, i, v);
    return *this;
  }
  Stmt& Bind(int i, const std::optional<int64_t>& v) {
    if (v) sqlite3_bind_int64(stmt_, i, *v);
    else sqlite3_bind_null(stmt_, i);
    return *this;
  }
  Stmt& BindNull(int i) {
    sqlite3_bind_null(stmt_, i);
    return *this;
  }

  /// true: a row is ready; false: done.
  Result<bool> Step() {
    int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    return DbError(db_, "catalog query");
  }

  std::string Text(int col) const {
    const unsigned char* t = sqlite3_column_text(stmt_, col);
    return t ? std::string(reinterpret_cast<const char*>(t),
                           static_cast<size_t>(sqlite3_column_bytes(stmt_, col)))
             : std::string();
  }
  bool IsNull(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
  int64_t Int(int col) const { return sqlite3_column_int64(stmt_, col); }
  /// Ready to step again (bindings are kept until rebound).
  void Reset() { sqlite3_reset(stmt_); }

 private:
  Stmt(sqlite3* db, sqlite3_stmt* s) : db_(db), stmt_(s) {}
  sqlite3* db_;
  sqlite3_stmt* stmt_;
};

}  // namespace skade::sqlite
