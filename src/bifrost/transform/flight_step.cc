// A custom step served by an Arrow Flight service: the rows go out in one DoExchange
// call and the batches that come back are the reply. The client is kept across rounds
// and dropped after a failure, so a restarted service is reached again.
#include <arrow/api.h>
#include <arrow/flight/api.h>

#include <future>
#include <thread>

#include "bifrost/transform/external_step.h"
#include "skade/table/arrow_internal.h"

namespace bifrost {
namespace {

namespace fl = arrow::flight;

// Whether a failed call may succeed when tried again: the service was unreachable,
// dropped the call or ran out of time, as opposed to refusing the rows.
bool Transient(const arrow::Status& st) {
  if (auto detail = fl::FlightStatusDetail::UnwrapStatus(st)) {
    auto code = detail->code();
    return code == fl::FlightStatusCode::Unavailable || code == fl::FlightStatusCode::TimedOut ||
           code == fl::FlightStatusCode::Cancelled;
  }
  return st.IsIOError();
}

class FlightRunner : public RowRunner {
 public:
  FlightRunner(std::string endpoint, std::string command, std::chrono::milliseconds connect,
               std::chrono::milliseconds call, int retries, int64_t batch_rows)
      : endpoint_(std::move(endpoint)),
        command_(std::move(command)),
        connect_(connect),
        call_(call),
        retries_(retries),
        batch_rows_(batch_rows) {}

  Result<std::shared_ptr<arrow::Table>> Run(const std::shared_ptr<arrow::Table>& rows) override {
    arrow::Status first, last;
    int attempts = 0;
    while (attempts <= retries_) {
      if (attempts > 0) std::this_thread::sleep_for(std::chrono::milliseconds(100 << (attempts - 1)));
      ++attempts;
      auto reply = Exchange(rows);
      if (reply.ok()) return *reply;
      last = reply.status();
      if (first.ok()) first = last;
      client_.reset();  // a restarted service needs a fresh channel
      if (!Transient(last)) break;
    }
    std::string what = "Flight service at " + endpoint_ + " failed";
    if (attempts > 1) what += " (" + std::to_string(attempts) + " attempts)";
    what += ": " + last.message();
    if (first.message() != last.message()) what += " (first attempt: " + first.message() + ")";
    return Transient(last) ? skade::IoError(what) : skade::InvalidArgument(what);
  }

 private:
  arrow::Status Connect() {
    if (client_) return arrow::Status::OK();
    ARROW_ASSIGN_OR_RAISE(auto location, fl::Location::Parse(endpoint_));
    ARROW_ASSIGN_OR_RAISE(auto client, fl::FlightClient::Connect(location));
    // gRPC connects lazily: a short call tells a service that is down from a slow one.
    // A service that does not implement ListActions still answered.
    fl::FlightCallOptions probe;
    probe.timeout = connect_;
    auto actions = client->ListActions(probe);
    if (!actions.ok() && Transient(actions.status()))
      return actions.status().WithMessage("cannot connect within ", connect_.count(), " ms: ",
                                          actions.status().message());
    client_ = std::move(client);
    return arrow::Status::OK();
  }

  arrow::Result<std::shared_ptr<arrow::Table>> Exchange(const std::shared_ptr<arrow::Table>& rows) {
    ARROW_RETURN_NOT_OK(Connect());
    fl::FlightCallOptions options;
    options.timeout = call_;
    ARROW_ASSIGN_OR_RAISE(auto exchange,
                          client_->DoExchange(options, fl::FlightDescriptor::Command(command_)));
    // The reply is read while the rows are written: a service that answers batch by
    // batch would otherwise fill the stream's window and wait on us forever.
    auto reading = std::async(std::launch::async, [&] { return exchange.reader->ToTable(); });
    auto write = [&]() -> arrow::Status {
      ARROW_RETURN_NOT_OK(exchange.writer->Begin(rows->schema()));
      arrow::TableBatchReader batches(*rows);
      batches.set_chunksize(batch_rows_);
      std::shared_ptr<arrow::RecordBatch> batch;
      while (true) {
        ARROW_RETURN_NOT_OK(batches.ReadNext(&batch));
        if (!batch) break;
        ARROW_RETURN_NOT_OK(exchange.writer->WriteRecordBatch(*batch));
      }
      return exchange.writer->DoneWriting();
    };
    arrow::Status wrote = write();
    if (!wrote.ok()) exchange.reader->Cancel();  // the reply would never end
    auto reply = reading.get();
    arrow::Status closed = exchange.writer->Close();
    // The reader's status says why the call ended (a write fails only with "stream closed").
    ARROW_RETURN_NOT_OK(reply.status());
    ARROW_RETURN_NOT_OK(wrote);
    ARROW_RETURN_NOT_OK(closed);
    return reply;
  }

  std::string endpoint_, command_;
  std::chrono::milliseconds connect_, call_;
  int retries_;
  int64_t batch_rows_;
  std::unique_ptr<fl::FlightClient> client_;
};

}  // namespace

Result<std::unique_ptr<RowRunner>> MakeFlightRunner(const CustomStep& step) {
  StepSettings s(step);
  std::string endpoint = s.String("endpoint", "", true);
  std::string command = s.String("command", step.name);
  auto connect = std::chrono::milliseconds(s.Int("connect_timeout_ms", 5000, 1, 600000));
  auto call = std::chrono::milliseconds(s.Int("call_timeout_ms", 60000, 1, 86400000));
  int retries = static_cast<int>(s.Int("retries", 2, 0, 10));
  int64_t batch_rows = s.Int("batch_rows", 65536, 1, int64_t{1} << 30);
  if (!endpoint.empty())
    if (auto location = fl::Location::Parse(endpoint); !location.ok())
      s.Problem("endpoint '" + endpoint + "' is not a Flight location (" +
                location.status().message() + "); write grpc://HOST:PORT");
  SKADE_RETURN_IF_ERROR(s.Check());
  return std::make_unique<FlightRunner>(endpoint, command, connect, call, retries, batch_rows);
}

}  // namespace bifrost
