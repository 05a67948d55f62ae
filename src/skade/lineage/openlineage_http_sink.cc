#include "skade/lineage/openlineage_http_sink.h"

#include <chrono>
#include <fstream>
#include <thread>

#include "skade/io/file_io.h"
#include "skade/lineage/http_post_internal.h"
#include "skade/lineage/lineage_recorder.h"
#include "skade/lineage/openlineage.h"

namespace skade::lineage {
namespace {

bool Retryable(int status) { return status == 408 || status == 429 || status >= 500; }

}  // namespace

OpenLineageHttpSink::OpenLineageHttpSink(Catalog& catalog, OpenLineageHttpOptions options)
    : catalog_(catalog), options_(std::move(options)) {
  while (!options_.url.empty() && options_.url.back() == '/') options_.url.pop_back();
}

Result<std::optional<int64_t>> OpenLineageHttpSink::DeliveredThrough() {
  std::ifstream in(options_.watermark_path);
  int64_t seq = 0;
  if (in && !(in >> seq)) return Corrupt("lineage watermark " + options_.watermark_path + " is not a number");
  return std::optional<int64_t>(seq);
}

Result<size_t> OpenLineageHttpSink::Pending() {
  SKADE_ASSIGN_OR_RETURN(std::optional<int64_t> delivered, DeliveredThrough());
  SKADE_ASSIGN_OR_RETURN(auto logged, catalog_.AnnotationsSince(delivered.value_or(0)));
  return logged.size();
}

Status OpenLineageHttpSink::SaveWatermark(int64_t seq) {
  // A crash leaves the old or the new watermark.
  return ReplaceFile(options_.watermark_path, std::to_string(seq) + "\n");
}

Status OpenLineageHttpSink::Flush() {
  std::lock_guard lock(mu_);
  SKADE_ASSIGN_OR_RETURN(std::optional<int64_t> delivered, DeliveredThrough());
  SKADE_ASSIGN_OR_RETURN(std::vector<LineageEvent> events, EventsFromLog(catalog_, delivered.value_or(0)));
  RunEventMapper mapper(catalog_.warehouse(), &catalog_);
  std::string endpoint = options_.url + "/api/v1/lineage";
  std::vector<std::pair<std::string, std::string>> headers;
  if (!options_.token.empty()) headers.emplace_back("Authorization", "Bearer " + options_.token);
  for (const auto& event : events) {
    std::string body = mapper.ToRunEvent(event);
    int backoff_ms = options_.initial_backoff_ms;
    for (int attempt = 1;; ++attempt) {
      Result<int> status = HttpPost(endpoint, body, headers, options_.timeout_ms);
      if (status && *status >= 200 && *status < 300) break;
      // A refusal (a wrong URL's 404, a 401) is not a delivery: the event and all
      // after it stay waiting, in order, for a later flush.
      if (status && !Retryable(*status))
        return IoError(endpoint + " answered HTTP " + std::to_string(*status) + " to event " + event.event_id +
                       "; nothing after commit_seq " + std::to_string(delivered.value_or(0)) +
                       " was delivered, it stays waiting");
      if (!status && status.error().kind != ErrorKind::kIoError)
        return std::unexpected(status.error());  // a bad URL: retrying cannot help
      if (attempt >= options_.max_attempts) {
        std::string why = status ? "HTTP " + std::to_string(*status) : status.error().message;
        return IoError("POST " + endpoint + " failed " + std::to_string(attempt) + " times (" + why +
                       "); delivery resumes at commit_seq " + std::to_string(*event.commit_seq));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(backoff_ms));
      backoff_ms *= 2;
    }
    SKADE_RETURN_IF_ERROR(SaveWatermark(*event.commit_seq));
    delivered = event.commit_seq;
  }
  return {};
}

}  // namespace skade::lineage
