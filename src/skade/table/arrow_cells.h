// Cells of an Arrow column hashed and compared straight from its buffers (fixed-width
// bytes, binary views; other types through scalars), so rows can be matched by key
// without building text per row.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>

namespace arrow {
class Array;
class BinaryArray;
class LargeBinaryArray;
}  // namespace arrow

namespace skade {

class CellColumn {
 public:
  explicit CellColumn(std::shared_ptr<arrow::Array> array);

  /// Equal cells hash equally; all nulls hash alike.
  uint64_t Hash(int64_t row) const;
  /// Nulls equal only nulls; the columns must have the same Arrow type.
  bool Equal(int64_t row, const CellColumn& other, int64_t other_row) const;
  bool IsNull(int64_t row) const;

 private:
  std::optional<std::string_view> Bytes(int64_t row) const;

  std::shared_ptr<arrow::Array> array_;
  int width_ = 0;                    // bytes per fixed-width cell
  const uint8_t* values_ = nullptr;  // first cell of the array's slice
  const arrow::BinaryArray* binary_ = nullptr;
  const arrow::LargeBinaryArray* large_ = nullptr;
};

/// Folds one cell's hash into a row's.
inline uint64_t CombineCellHash(uint64_t row_hash, uint64_t cell_hash) {
  return (row_hash ^ cell_hash) * 0x100000001b3ULL;
}
inline constexpr uint64_t kRowHashSeed = 0x84222325cbf29ce4ULL;

}  // namespace skade
