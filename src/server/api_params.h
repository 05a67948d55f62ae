// Query parameters of the viewer API (docs/api.md): times, bounded integers,
// booleans and lists, each error a one-line message naming the parameter and value.
#pragma once

#include <httplib.h>

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "skade/common/result.h"

namespace skade::server {

/// A client's value as error messages echo it: cut short when long.
std::string ShownValue(const std::string& value);

/// Milliseconds since the epoch or RFC 3339; nullopt when absent.
/// Errors: kInvalidArgument naming the parameter and value.
Result<std::optional<int64_t>> TimeParam(const httplib::Request& req, const std::string& name);
/// An integer in [min, max]; `fallback` when absent. Errors: kInvalidArgument.
Result<int64_t> IntParam(const httplib::Request& req, const std::string& name, int64_t fallback,
                         int64_t min, int64_t max);
/// `true` or `false`; `fallback` when absent. Errors: kInvalidArgument.
Result<bool> BoolParam(const httplib::Request& req, const std::string& name, bool fallback);
/// A 64-bit snapshot id; nullopt when absent. Errors: kInvalidArgument.
Result<std::optional<int64_t>> SnapshotParam(const httplib::Request& req, const std::string& name);
/// Comma-separated names, empty items dropped.
std::vector<std::string> ListParam(const httplib::Request& req, const std::string& name);

}  // namespace skade::server
