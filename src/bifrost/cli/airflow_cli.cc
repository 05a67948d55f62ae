#include "airflow_cli.h"

#include <cstdio>

namespace bifrost::cli {

namespace {
const AirflowOptions kDefaults;
}  // namespace

void AddAirflowFlags(CLI::App& sub, AirflowOptions& o, std::string& timeout,
                     const CLI::Validator& duration) {
  sub.add_option("--airflow-url", o.url,
                 "after each round, an Airflow 3 asset event per table that changed the graph, "
                 "to this api-server (http://HOST:PORT)");
  sub.add_option("--airflow-token-file", o.token_file,
                 "file holding the API's bearer token (read again after a 401)");
  sub.add_option("--airflow-user", o.user, "user to get API tokens for from /auth/token");
  sub.add_option("--airflow-password-file", o.password_file,
                 "file holding --airflow-user's password");
  sub.add_option("--airflow-timeout", timeout,
                 "longest an Airflow request may take (default " +
                     std::to_string(kDefaults.timeout_ms / 1000) + "s)")
      ->check(duration);
  sub.add_option("--asset-prefix", o.asset_prefix,
                 "asset URI = prefix + table (default " + kDefaults.asset_prefix + ")");
}

Result<std::unique_ptr<AirflowEvents>> MakeAirflowEvents(const AirflowOptions& o) {
  if (o.url.empty()) {
    for (auto [flag, set] : {std::pair{"--airflow-token-file", !o.token_file.empty()},
                             std::pair{"--airflow-user", !o.user.empty()},
                             std::pair{"--airflow-password-file", !o.password_file.empty()},
                             std::pair{"--asset-prefix", o.asset_prefix != kDefaults.asset_prefix},
                             std::pair{"--airflow-timeout", o.timeout_ms != kDefaults.timeout_ms}})
      if (set) return skade::InvalidArgument(std::string(flag) + " needs --airflow-url");
    return std::unique_ptr<AirflowEvents>();
  }
  return AirflowEvents::Make(o);
}

void DeliverAirflowEvents(AirflowEvents& events, StateLedger& ledger,
                          std::chrono::milliseconds lease, bool force) {
  int64_t sent_before = events.sent();
  for (const auto& note : events.Deliver(ledger, lease, force))
    std::fprintf(stderr, "bifrost: warning: %s\n", note.c_str());
  if (events.sent() != sent_before || events.pending() > 0)
    std::printf("  airflow: %lld event(s) sent, %lld pending\n",
                static_cast<long long>(events.sent() - sent_before),
                static_cast<long long>(events.pending()));
  std::fflush(stdout);
}

}  // namespace bifrost::cli
