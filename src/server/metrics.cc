#include "server/metrics.h"

#include <sstream>

namespace skade::server {
namespace {

// Label values are route patterns and methods; quotes and backslashes escaped anyway.
std::string Label(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

}  // namespace

void Metrics::ObserveRequest(const std::string& method, const std::string& route, int status,
                             double seconds) {
  std::lock_guard lock(mu_);
  ++requests_[{method, route, status}];
  Histogram& h = latency_[{method, route}];
  for (size_t i = 0; i < kBuckets.size(); ++i)
    if (seconds <= kBuckets[i]) ++h.counts[i];
  ++h.count;
  h.sum += seconds;
}

void Metrics::CountCommit(bool conflict) { ++(conflict ? conflicts_ : commits_); }

void Metrics::CountLineage(int64_t accepted, int64_t rejected) {
  lineage_accepted_ += static_cast<uint64_t>(accepted);
  lineage_rejected_ += static_cast<uint64_t>(rejected);
}

std::string Metrics::Render() const {
  std::ostringstream o;
  std::lock_guard lock(mu_);
  o << "# HELP skade_http_requests_total HTTP requests answered, by method, route and status.\n"
       "# TYPE skade_http_requests_total counter\n";
  for (const auto& [k, n] : requests_)
    o << "skade_http_requests_total{method=\"" << Label(std::get<0>(k)) << "\",route=\""
      << Label(std::get<1>(k)) << "\",status=\"" << std::get<2>(k) << "\"} " << n << "\n";
  o << "# HELP skade_http_request_duration_seconds Time to answer HTTP requests.\n"
       "# TYPE skade_http_request_duration_seconds histogram\n";
  for (const auto& [k, h] : latency_) {
    std::string labels = "method=\"" + Label(k.first) + "\",route=\"" + Label(k.second) + "\"";
    for (size_t i = 0; i < kBuckets.size(); ++i)
      o << "skade_http_request_duration_seconds_bucket{" << labels << ",le=\"" << kBuckets[i]
        << "\"} " << h.counts[i] << "\n";
    o << "skade_http_request_duration_seconds_bucket{" << labels << ",le=\"+Inf\"} " << h.count
      << "\n";
    o << "skade_http_request_duration_seconds_sum{" << labels << "} " << h.sum << "\n";
    o << "skade_http_request_duration_seconds_count{" << labels << "} " << h.count << "\n";
  }
  o << "# HELP skade_commits_total Table commits made through the server.\n"
       "# TYPE skade_commits_total counter\n"
       "skade_commits_total "
    << commits_.load()
    << "\n"
       "# HELP skade_commit_conflicts_total Commits refused because a requirement no longer held.\n"
       "# TYPE skade_commit_conflicts_total counter\n"
       "skade_commit_conflicts_total "
    << conflicts_.load()
    << "\n"
       "# HELP skade_sse_clients Event-stream clients connected now.\n"
       "# TYPE skade_sse_clients gauge\n"
       "skade_sse_clients "
    << sse_clients_.load()
    << "\n"
       "# HELP skade_lineage_events_received_total OpenLineage events received, by outcome.\n"
       "# TYPE skade_lineage_events_received_total counter\n"
       "skade_lineage_events_received_total{outcome=\"accepted\"} "
    << lineage_accepted_.load()
    << "\n"
       "skade_lineage_events_received_total{outcome=\"rejected\"} "
    << lineage_rejected_.load() << "\n";
  return o.str();
}

}  // namespace skade::server
