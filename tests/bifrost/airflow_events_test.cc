// What goes into an asset event, and which rounds make none. (Delivery runs against a real
// Airflow in tests/bifrost/test_airflow_events.py.)
#include "bifrost/platform/airflow_events.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "testing/matchers.h"

namespace bifrost {
namespace {

using skade::testing::IsErrorWith;
using skade::testing::IsOk;

std::unique_ptr<AirflowEvents> Events() {
  AirflowOptions o;
  o.url = "http://127.0.0.1:8080/";
  o.asset_prefix = "x-wh://lake/";
  auto made = AirflowEvents::Make(o);
  EXPECT_THAT(made, IsOk());
  (*made)->SetGraph("g");
  return std::move(*made);
}

TEST(AirflowEventsTest, ATableThatChangedTheGraphMakesOneEvent) {
  auto events = Events();
  TableRound r;
  r.table = "shop.orders";
  r.outcome = TableRound::Outcome::kSynced;
  r.rows_read = 4;
  r.description = "appends after snapshot 1 up to 9223372036854775807";
  r.sink.vertex_rows = 4;
  r.sink.nodes_created = 3;
  auto made = events->EventFor(r, TableState{1, {}}, TableState{INT64_MAX, {}});
  ASSERT_TRUE(made.has_value());
  auto j = nlohmann::json::parse(*made);
  EXPECT_EQ(j["uri"], "x-wh://lake/shop.orders");
  const auto& extra = j["extra"];
  EXPECT_EQ(extra["table"], "shop.orders");
  EXPECT_EQ(extra["graph"], "g");
  // ids as text: all 64 bits survive a JavaScript reader
  EXPECT_EQ(extra["snapshot_id"], "9223372036854775807");
  EXPECT_EQ(extra["previous_snapshot_id"], "1");
  EXPECT_EQ(extra["rows_read"], 4);
  EXPECT_EQ(extra["vertex_rows"], 4);
  EXPECT_EQ(extra["nodes_created"], 3);
  EXPECT_EQ(extra["bifrost_event_id"].get<std::string>().size(), 32u);
  // every event has its own id
  EXPECT_NE(nlohmann::json::parse(*events->EventFor(r, {}, {}))["extra"]["bifrost_event_id"],
            extra["bifrost_event_id"]);
}

TEST(AirflowEventsTest, IdleOrEmptyRoundsMakeNone) {
  auto events = Events();
  TableRound idle;
  idle.table = "shop.orders";
  EXPECT_FALSE(events->EventFor(idle, {}, {}).has_value());
  TableRound empty = idle;
  empty.outcome = TableRound::Outcome::kSynced;  // read, but nothing reached the graph
  EXPECT_FALSE(events->EventFor(empty, {}, TableState{3, {}}).has_value());
  TableRound deleted = empty;
  deleted.sink.delete_rows = 1;
  EXPECT_TRUE(events->EventFor(deleted, {}, TableState{3, {}}).has_value());
}

TEST(AirflowEventsTest, BadOptionsNameTheFlag) {
  AirflowOptions o;
  o.url = "localhost:8080";
  EXPECT_THAT(AirflowEvents::Make(o),
              IsErrorWith(skade::ErrorKind::kInvalidArgument, "--airflow-url"));
  o.url = "http://localhost:8080";
  o.password_file = "/nonexistent/pw";
  EXPECT_THAT(AirflowEvents::Make(o), IsErrorWith(skade::ErrorKind::kInvalidArgument,
                                                  "--airflow-password-file needs --airflow-user"));
  o.user = "u";
  EXPECT_THAT(AirflowEvents::Make(o),
              IsErrorWith(skade::ErrorKind::kInvalidArgument, "'/nonexistent/pw' cannot be read"));
}

}  // namespace
}  // namespace bifrost
