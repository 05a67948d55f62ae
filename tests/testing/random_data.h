// Test support: random schemas and rows, and moving rows in and out of Arrow.
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "skade/format/types.h"
#include "skade/format/value.h"

namespace arrow {
class Array;
class RecordBatch;
class Table;
}  // namespace arrow

namespace skade::testing {

/// One cell of any type: a primitive value, or children for nested types
/// (struct: one per field; list: the elements; map: key, value, key, value ...).
struct Cell {
  bool null = false;
  Value value;
  std::vector<Cell> children;
  bool operator==(const Cell&) const = default;
};
using Row = std::vector<Cell>;

/// Canonical text of a cell (for sorting and diff messages).
std::string CellToString(const Cell& cell, const Type& type);
std::string RowToString(const Row& row, const std::vector<NestedField>& fields);

class RandomData {
 public:
  explicit RandomData(uint64_t seed) : rng_(seed) {}
  std::mt19937_64& rng() { return rng_; }
  int Uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  bool Chance(double p) { return std::bernoulli_distribution(p)(rng_); }

  /// A random primitive type (every Iceberg primitive).
  TypePtr PrimitiveType();
  /// A random schema of `n` top-level columns; with `nested`, some struct/list/map.
  Schema RandomSchema(int n, bool nested);
  /// A random value of a primitive type; values are drawn from a small domain so
  /// filters and partitions hit.
  Value RandomValue(const Type& type);
  Cell RandomCell(const NestedField& field, double null_chance);
  Row RandomRow(const Schema& schema, double null_chance);

 private:
  std::mt19937_64 rng_;
};

/// Rows → an Arrow table with the schema's Arrow types (field ids in metadata).
std::shared_ptr<arrow::Table> ToArrow(const Schema& schema, const std::vector<Row>& rows);
/// An Arrow table (columns in `fields` order) → rows.
std::vector<Row> FromArrow(const arrow::Table& table, const std::vector<NestedField>& fields);

}  // namespace skade::testing
