// Counters of the run loop, as Prometheus text (format 0.0.4), served over HTTP.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "bifrost/sync/round.h"

namespace bifrost {

/// Cumulative counters folded after every round. Thread-safe.
class Metrics {
 public:
  void Record(const RoundReport& round);
  /// Sets a family kept by a part outside the round (e.g. the Airflow events), rendered
  /// after the round's families in name order. `type` is counter or gauge.
  void Set(const std::string& name, const std::string& type, const std::string& help,
           double value);
  /// The exposition text; every family has HELP and TYPE, counters end in _total.
  std::string RenderPrometheus() const;

 private:
  mutable std::mutex mu_;
  int64_t rounds_ = 0, rounds_failed_ = 0, rounds_idle_ = 0;
  int64_t table_syncs_ = 0, table_failures_ = 0;
  int64_t rows_read_ = 0;
  SinkReport sink_;  // summed over rounds
  double seconds_ = 0, last_round_seconds_ = 0;
  struct Family {
    std::string type, help;
    double value = 0;
  };
  std::map<std::string, Family> extra_;
};

/// `GET /metrics` on HOST:PORT from a background thread; stops on destruction.
class MetricsServer {
 public:
  ~MetricsServer();
  /// `metrics` is borrowed. Errors: kInvalidArgument (bad address), kIoError (bind).
  static Result<std::unique_ptr<MetricsServer>> Start(const std::string& host_port,
                                                      const Metrics& metrics);
  int port() const { return port_; }

 private:
  MetricsServer(int fd, int port, const Metrics& metrics);
  void Serve();
  int fd_;
  int port_;
  const Metrics& metrics_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace bifrost
