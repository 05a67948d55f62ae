#include "airflow_cli.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>

#include "bifrost/sync/metrics.h"

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

bool DeliverAirflowEvents(AirflowEvents& events, DeliveryLedger& ledger,
                          std::chrono::milliseconds lease, bool force) {
  int64_t sent_before = events.sent();
  auto notes = events.Deliver(*ledger.ledger, *ledger.lease, lease, force);
  for (const auto& note : notes) std::fprintf(stderr, "bifrost: warning: %s\n", note.c_str());
  if (events.sent() != sent_before || events.pending() > 0)
    std::printf("  airflow: %lld event(s) sent, %lld pending\n",
                static_cast<long long>(events.sent() - sent_before),
                static_cast<long long>(events.pending()));
  std::fflush(stdout);
  return notes.empty();
}

AirflowDelivery::AirflowDelivery(AirflowEvents& events,
                                 std::function<Result<DeliveryLedger>()> open,
                                 std::chrono::milliseconds lease,
                                 std::chrono::milliseconds interval, Metrics& metrics)
    : events_(events), open_(std::move(open)), lease_(lease), interval_(interval), metrics_(metrics) {
  // Without a pipe a stop still ends the thread, only not in the middle of a request.
  if (::pipe2(stop_pipe_, O_CLOEXEC | O_NONBLOCK) == 0) events_.SetStopFd(stop_pipe_[0]);
  thread_ = std::thread([this] { Loop(); });
}

AirflowDelivery::~AirflowDelivery() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (stop_pipe_[1] >= 0) (void)!::write(stop_pipe_[1], "x", 1);
  thread_.join();
  events_.SetStopFd(-1);
  for (int fd : stop_pipe_)
    if (fd >= 0) ::close(fd);
}

void AirflowDelivery::Wake() {
  {
    std::lock_guard lock(mu_);
    woken_ = true;
  }
  cv_.notify_all();
}

void AirflowDelivery::Loop() {
  std::optional<DeliveryLedger> ledger;
  // Events waiting: tried again when the backoff ends, and no sooner than an interval.
  auto retry_at = std::chrono::steady_clock::time_point::max();
  while (true) {
    {
      std::unique_lock lock(mu_);
      auto due = [&] { return stopping_ || woken_ || std::chrono::steady_clock::now() >= retry_at; };
      if (retry_at == std::chrono::steady_clock::time_point::max())
        cv_.wait(lock, due);
      else
        cv_.wait_until(lock, retry_at, due);
      if (stopping_) return;
      woken_ = false;
    }
    retry_at = std::chrono::steady_clock::time_point::max();
    if (!ledger) {
      auto opened = open_();
      if (!opened) {
        std::fprintf(stderr, "bifrost: warning: Airflow events: %s; retry in %lld ms\n",
                     opened.error().message.c_str(), static_cast<long long>(interval_.count()));
        retry_at = std::chrono::steady_clock::now() + interval_;
        continue;
      }
      ledger = std::move(*opened);
    }
    // After a problem the ledger is opened afresh: its connection may be the one that failed.
    if (!DeliverAirflowEvents(events_, *ledger, lease_, false)) ledger.reset();
    events_.Publish(metrics_);
    if (events_.pending() > 0)
      retry_at = std::max(events_.next_try(), std::chrono::steady_clock::now() + interval_);
  }
}

}  // namespace bifrost::cli
