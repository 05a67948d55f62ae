// The `--airflow-*` flags of `bifrost build` and `run` (platform/airflow_events.h).
#pragma once

#include <CLI/CLI.hpp>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "bifrost/platform/airflow_events.h"
#include "session.h"

namespace bifrost::cli {

/// Adds --airflow-url, --airflow-token-file, --airflow-user, --airflow-password-file,
/// --airflow-timeout (into `timeout`, checked by `duration`) and --asset-prefix to `sub`.
void AddAirflowFlags(CLI::App& sub, AirflowOptions& options, std::string& timeout,
                     const CLI::Validator& duration);

/// The sender the flags ask for; null without --airflow-url. Errors: kInvalidArgument
/// naming the flag (a bad URL, a file that cannot be read, flags that need --airflow-url).
Result<std::unique_ptr<AirflowEvents>> MakeAirflowEvents(const AirflowOptions& options);

/// Delivers the outbox now and prints what happened: a warning per problem, a line when
/// something was sent or waits. Never fails; false when there was a problem.
bool DeliverAirflowEvents(AirflowEvents& events, DeliveryLedger& ledger,
                          std::chrono::milliseconds lease, bool force);

/// `bifrost run`'s delivery: a thread of its own on a ledger of its own, so an Airflow
/// that hangs or is down never delays a round. It delivers when woken (after a round
/// that enqueued events), when a backoff ends while events wait, and once at the start
/// (what an earlier process left). The outbox stays the truth: what is not delivered
/// when it stops waits there for the next start.
class AirflowDelivery {
 public:
  /// Takes over `events`' stop fd: the destructor abandons a request in flight.
  /// `interval` spaces out attempts that found nothing to do but events waiting (another
  /// instance's lease). Publishes the counters into `metrics` after each delivery.
  AirflowDelivery(AirflowEvents& events, std::function<Result<DeliveryLedger>()> open,
                  std::chrono::milliseconds lease, std::chrono::milliseconds interval,
                  Metrics& metrics);
  /// Stops: a request under way is abandoned, the thread joined.
  ~AirflowDelivery();
  AirflowDelivery(const AirflowDelivery&) = delete;
  AirflowDelivery& operator=(const AirflowDelivery&) = delete;

  /// Asks for a delivery now (it does not wait for it).
  void Wake();

 private:
  void Loop();

  AirflowEvents& events_;
  std::function<Result<DeliveryLedger>()> open_;
  std::chrono::milliseconds lease_, interval_;
  Metrics& metrics_;
  int stop_pipe_[2] = {-1, -1};
  std::mutex mu_;
  std::condition_variable cv_;
  bool woken_ = true, stopping_ = false;  // woken: the first delivery is at the start
  std::thread thread_;
};

}  // namespace bifrost::cli
