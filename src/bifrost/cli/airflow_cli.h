// The `--airflow-*` flags of `bifrost build` and `run` (platform/airflow_events.h).
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>

#include "bifrost/platform/airflow_events.h"

namespace bifrost::cli {

/// Adds --airflow-url, --airflow-token-file, --airflow-user, --airflow-password-file,
/// --airflow-timeout (into `timeout`, checked by `duration`) and --asset-prefix to `sub`.
void AddAirflowFlags(CLI::App& sub, AirflowOptions& options, std::string& timeout,
                     const CLI::Validator& duration);

/// The sender the flags ask for; null without --airflow-url. Errors: kInvalidArgument
/// naming the flag (a bad URL, a file that cannot be read, flags that need --airflow-url).
Result<std::unique_ptr<AirflowEvents>> MakeAirflowEvents(const AirflowOptions& options);

/// Delivers the outbox after a round and prints what happened: a warning per problem, a
/// line when something was sent or waits. Never fails.
void DeliverAirflowEvents(AirflowEvents& events, StateLedger& ledger,
                          std::chrono::milliseconds lease, bool force);

}  // namespace bifrost::cli
