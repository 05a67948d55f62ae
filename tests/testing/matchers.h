// gmock matchers for Result / Status.
#pragma once

#include <gmock/gmock.h>

#include "skade/common/result.h"

namespace skade::testing {

MATCHER(IsOk, "is ok") {
  if (arg.has_value()) return true;
  *result_listener << "error: " << arg.error().ToString();
  return false;
}

MATCHER_P(IsError, kind, std::string("is error ") + std::string(ErrorKindName(kind))) {
  if (arg.has_value()) {
    *result_listener << "is ok";
    return false;
  }
  *result_listener << "error: " << arg.error().ToString();
  return arg.error().kind == kind;
}

MATCHER_P2(IsErrorWith, kind, substring, "is error with message") {
  if (arg.has_value()) {
    *result_listener << "is ok";
    return false;
  }
  *result_listener << "error: " << arg.error().ToString();
  return arg.error().kind == kind && arg.error().message.find(substring) != std::string::npos;
}

}  // namespace skade::testing
