// The server's Prometheus metrics: requests by route and status, latency
// histograms, commits, conflicts, SSE clients, lineage ingest counts.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

namespace skade::server {

class Metrics {
 public:
  /// One finished request: its route pattern (not the raw path, so label values stay few).
  void ObserveRequest(const std::string& method, const std::string& route, int status,
                      double seconds);
  void CountCommit(bool conflict);
  void CountLineage(int64_t accepted, int64_t rejected);
  void SseClientOpened() { ++sse_clients_; }
  void SseClientClosed() { --sse_clients_; }
  /// The exposition text (version 0.0.4).
  std::string Render() const;

 private:
  static constexpr std::array<double, 12> kBuckets = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                                      0.05,   0.1,   0.25,   0.5,   1,    5};
  struct Histogram {
    std::array<uint64_t, kBuckets.size()> counts{};
    uint64_t count = 0;
    double sum = 0;
  };
  mutable std::mutex mu_;
  std::map<std::tuple<std::string, std::string, int>, uint64_t> requests_;
  std::map<std::pair<std::string, std::string>, Histogram> latency_;
  std::atomic<uint64_t> commits_{0}, conflicts_{0}, lineage_accepted_{0}, lineage_rejected_{0};
  std::atomic<int64_t> sse_clients_{0};
};

}  // namespace skade::server
