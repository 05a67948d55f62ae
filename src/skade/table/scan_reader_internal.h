// The record-batch reader behind TableScan::Read. Not API.
#pragma once

#include <memory>

#include "skade/table/scan.h"

namespace skade {

std::shared_ptr<arrow::RecordBatchReader> MakeScanReader(ScanPlan plan, FileIO* io);

}  // namespace skade
