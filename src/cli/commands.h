// The skade command line: one function per command, shared context.
#pragma once

#include <memory>
#include <string>

#include "skade/catalog/catalog.h"
#include "skade/common/result.h"

namespace skade::cli {

struct Context {
  std::string warehouse;
  std::unique_ptr<Catalog> catalog;
  bool progress = false;  // stderr is a terminal
  Status Open();
};

/// Builds the demo warehouse: related tables, several appends, scans, time travel.
Status RunDemo(Context& ctx);

}  // namespace skade::cli
