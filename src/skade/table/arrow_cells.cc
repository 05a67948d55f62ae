#include "skade/table/arrow_cells.h"

#include <arrow/api.h>

#include <functional>
#include <string>

namespace skade {

CellColumn::CellColumn(std::shared_ptr<arrow::Array> array) : array_(std::move(array)) {
  const auto* fw = dynamic_cast<const arrow::FixedWidthType*>(array_->type().get());
  const auto& buffers = array_->data()->buffers;
  if (fw && fw->bit_width() % 8 == 0 && buffers.size() >= 2 && buffers[1]) {
    width_ = fw->bit_width() / 8;
    values_ = buffers[1]->data() + array_->offset() * width_;
  } else if (array_->type_id() == arrow::Type::STRING ||
             array_->type_id() == arrow::Type::BINARY) {
    binary_ = static_cast<const arrow::BinaryArray*>(array_.get());
  } else if (array_->type_id() == arrow::Type::LARGE_STRING ||
             array_->type_id() == arrow::Type::LARGE_BINARY) {
    large_ = static_cast<const arrow::LargeBinaryArray*>(array_.get());
  }
}

bool CellColumn::IsNull(int64_t row) const { return array_->IsNull(row); }

std::optional<std::string_view> CellColumn::Bytes(int64_t row) const {
  if (values_)
    return std::string_view(reinterpret_cast<const char*>(values_ + row * width_), width_);
  if (binary_) return binary_->GetView(row);
  if (large_) return large_->GetView(row);
  return std::nullopt;
}

uint64_t CellColumn::Hash(int64_t row) const {
  if (array_->IsNull(row)) return 0x9e3779b97f4a7c15ULL;
  if (auto bytes = Bytes(row)) return std::hash<std::string_view>{}(*bytes);
  auto scalar = array_->GetScalar(row);
  return std::hash<std::string>{}(scalar.ok() ? (*scalar)->ToString() : std::string());
}

bool CellColumn::Equal(int64_t row, const CellColumn& other, int64_t other_row) const {
  bool null = array_->IsNull(row), other_null = other.array_->IsNull(other_row);
  if (null || other_null) return null && other_null;
  auto a = Bytes(row), b = other.Bytes(other_row);
  if (a && b) return *a == *b;
  auto sa = array_->GetScalar(row), sb = other.array_->GetScalar(other_row);
  return sa.ok() && sb.ok() && (*sa)->Equals(**sb);
}

}  // namespace skade
