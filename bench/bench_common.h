// Shared helpers of the benchmark drivers (bench/*.cc): argument parsing, table
// creation, reading the source Parquet file, steady-clock timing, JSON output.
// The drivers are plain main() programs driven by bench/run_bench.py.
#pragma once

#include <arrow/api.h>
#include <arrow/io/file.h>
#include <parquet/arrow/reader.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "skade/catalog/catalog.h"
#include "skade/format/partition_spec.h"
#include "skade/format/types.h"
#include "skade/table/table.h"

namespace skade::bench {

[[noreturn]] inline void Die(const std::string& what) {
  std::fprintf(stderr, "bench: %s\n", what.c_str());
  std::exit(1);
}

template <typename T>
T Check(Result<T> r, const std::string& what) {
  if (!r) Die(what + ": " + r.error().ToString());
  return std::move(*r);
}
inline void Check(Status s, const std::string& what) {
  if (!s) Die(what + ": " + s.error().ToString());
}
template <typename T>
T CheckArrow(arrow::Result<T> r, const std::string& what) {
  if (!r.ok()) Die(what + ": " + r.status().ToString());
  return std::move(r).ValueUnsafe();
}

/// `--key value` pairs; repeated keys accumulate (for --property).
struct Args {
  std::string mode;
  std::multimap<std::string, std::string> kv;
  Args(int argc, char** argv) {
    int i = 1;
    if (argc > 1 && std::string(argv[1]).rfind("--", 0) != 0) mode = argv[i++];
    for (; i < argc; ++i) {
      std::string k = argv[i];
      if (k.rfind("--", 0) != 0 || i + 1 >= argc) Die("bad argument '" + k + "'");
      kv.emplace(k.substr(2), argv[++i]);
    }
  }
  std::string Get(const std::string& k, const std::string& fallback = "\x01") const {
    auto it = kv.find(k);
    if (it != kv.end()) return it->second;
    if (fallback == "\x01") Die("missing --" + k);
    return fallback;
  }
  int64_t Int(const std::string& k, int64_t fallback) const {
    auto it = kv.find(k);
    return it == kv.end() ? fallback : std::stoll(it->second);
  }
  std::map<std::string, std::string> Properties() const {
    std::map<std::string, std::string> out;
    auto [b, e] = kv.equal_range("property");
    for (auto it = b; it != e; ++it) {
      auto eq = it->second.find('=');
      if (eq == std::string::npos) Die("--property wants KEY=VALUE");
      out[it->second.substr(0, eq)] = it->second.substr(eq + 1);
    }
    return out;
  }
};

inline double Seconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

/// CPU seconds (user + system, all threads) the process has used: under a loaded
/// machine the wall times wait for a core, this does not.
inline double CpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  auto s = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6; };
  return s(u.ru_utime) + s(u.ru_stime);
}

/// Reads a whole Parquet file into memory (not timed by the callers).
inline std::shared_ptr<arrow::Table> ReadParquet(const std::string& path) {
  auto file = CheckArrow(arrow::io::ReadableFile::Open(path), path);
  auto reader = CheckArrow(parquet::arrow::OpenFile(file, arrow::default_memory_pool()), path);
  auto table = CheckArrow(reader->ReadTable(), path);
  return CheckArrow(table->CombineChunks(), path);
}

/// Creates `ident` (and its namespace if needed) from a CLI schema spec and partition spec.
inline std::unique_ptr<Table> CreateTable(Catalog& catalog, const TableIdent& ident,
                                          const std::string& schema_spec, const std::string& partition,
                                          const std::map<std::string, std::string>& props) {
  if (!Check(catalog.NamespaceExists(ident.ns), "namespace"))
    Check(catalog.CreateNamespace(ident.ns), "create namespace " + ident.ns);
  Schema schema = Check(ParseSchemaSpec(schema_spec), "schema");
  PartitionSpec spec;
  if (!partition.empty()) spec = Check(ParsePartitionSpec(partition, schema), "partition spec");
  LoadedTable loaded = Check(catalog.CreateTable(ident, schema, spec, props), "create " + ident.ToString());
  return std::make_unique<Table>(catalog, std::move(loaded));
}

inline void PrintJson(const nlohmann::json& j) {
  std::fputs(j.dump().c_str(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
}

}  // namespace skade::bench
