// Arrow/Parquet statuses become skade errors here, in one place.
#pragma once

#include <arrow/compute/initialize.h>
#include <arrow/result.h>
#include <arrow/status.h>

#include <string>

#include "skade/common/result.h"

namespace skade {

inline Error FromArrow(const arrow::Status& st, std::string_view context) {
  ErrorKind kind = st.IsIOError()                                ? ErrorKind::kIoError
                   : st.IsInvalid() || st.IsTypeError()          ? ErrorKind::kInvalidArgument
                   : st.IsNotImplemented()                       ? ErrorKind::kUnsupported
                   : st.IsKeyError() || st.IsIndexError()        ? ErrorKind::kInvalidArgument
                                                                 : ErrorKind::kInternal;
  std::string msg = st.message();
  // The operating system's reason ("No space left on device") travels in the detail.
  if (st.detail()) {
    std::string why = st.detail()->ToString();
    if (why.starts_with("[errno ")) why.erase(0, why.find("] ") == std::string::npos ? 0 : why.find("] ") + 2);
    if (!why.empty() && msg.find(why) == std::string::npos) msg += ": " + why;
  }
  return Error{kind, context.empty() ? msg : std::string(context) + ": " + msg};
}

/// Registers Arrow's compute kernels (a separate library since Arrow 21) once.
inline void InitArrowCompute() {
  static const bool initialized = arrow::compute::Initialize().ok();
  (void)initialized;
}

}  // namespace skade

/// Evaluates an arrow::Status expression; on failure returns it as a skade error.
#define SKADE_ARROW_RETURN(expr, ctx)                                                \
  do {                                                                               \
    ::arrow::Status skade_arrow_st = (expr);                                         \
    if (!skade_arrow_st.ok())                                                        \
      return std::unexpected<::skade::Error>(::skade::FromArrow(skade_arrow_st, ctx)); \
  } while (0)

#define SKADE_ARROW_ASSIGN_IMPL(tmp, lhs, expr, ctx)                                 \
  auto tmp = (expr);                                                                 \
  if (!tmp.ok()) return std::unexpected<::skade::Error>(::skade::FromArrow(tmp.status(), ctx)); \
  lhs = std::move(tmp).ValueUnsafe()

/// `SKADE_ARROW_ASSIGN(auto x, arrow_result_expr, "context");`
#define SKADE_ARROW_ASSIGN(lhs, expr, ctx) \
  SKADE_ARROW_ASSIGN_IMPL(SKADE_CONCAT(skade_arrow_res_, __LINE__), lhs, expr, ctx)
