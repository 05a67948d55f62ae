// Untrusted OpenLineage bodies and stored events: random corruptions of valid inputs
// never crash the parsers; each is either accepted or refused with kInvalidArgument /
// kCorrupt and a message.
#include <gtest/gtest.h>

#include <random>

#include "skade/lineage/openlineage.h"

namespace skade::lineage {
namespace {

const char* kRunEvent = R"({"eventType":"COMPLETE","eventTime":"2026-03-01T10:00:00Z",
  "producer":"https://example.com/p","schemaURL":"https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
  "run":{"runId":"0190c0de-1111-7000-8000-000000000001","facets":{"skade":{"_producer":"x","_schemaURL":"y",
  "eventId":"0190c0de-1111-7000-8000-000000000002","actor":"a","operation":"append","commitSeq":3}}},
  "job":{"namespace":"n","name":"j"},
  "inputs":[{"namespace":"file","name":"/wh/a.db/b","facets":{"version":{"_producer":"x","_schemaURL":"y","datasetVersion":"42"},
    "symlinks":{"_producer":"x","_schemaURL":"y","identifiers":[{"namespace":"file:/wh","name":"a.b","type":"TABLE"}]}}}],
  "outputs":[{"namespace":"s3://b","name":"k"}]})";

std::string Mutate(std::string s, std::mt19937& rng) {
  int edits = 1 + static_cast<int>(rng() % 4);
  for (int i = 0; i < edits && !s.empty(); ++i) {
    size_t at = rng() % s.size();
    switch (rng() % 4) {
      case 0: s[at] = static_cast<char>(rng() % 256); break;           // any byte
      case 1: s.erase(at, 1 + rng() % 8); break;                        // drop a few
      case 2: s.insert(at, std::string(1 + rng() % 3, "{}[]\":,\\0"[rng() % 9])); break;
      case 3: s = s.substr(0, at); break;                               // truncate
    }
  }
  return s;
}

TEST(OpenLineageHostileTest, CorruptedRunEventsAreRefusedCleanly) {
  RunEventMapper mapper("/wh", nullptr);
  ASSERT_TRUE(mapper.FromRunEvent(kRunEvent).has_value());
  std::mt19937 rng(20261129);
  int accepted = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string input = Mutate(kRunEvent, rng);
    auto e = mapper.FromRunEvent(input);
    if (e) {
      ++accepted;
      // Whatever was accepted maps back to a RunEvent that parses again.
      EXPECT_TRUE(mapper.FromRunEvent(mapper.ToRunEvent(*e)).has_value()) << input;
    } else {
      EXPECT_EQ(e.error().kind, ErrorKind::kInvalidArgument) << input;
      EXPECT_FALSE(e.error().message.empty());
    }
  }
  EXPECT_GT(accepted, 0) << "some mutations (inside strings) keep the event valid";
}

TEST(OpenLineageHostileTest, CorruptedStoredEventsAreRefusedCleanly) {
  LineageEvent e{NewEventId(), "a", "append", {DatasetRef{"a.b", 1, std::nullopt}},
                 {DatasetRef{"x", 2, SystemRef{"spark", "spark"}}}, 1, 3, "r", JobRef{"n", "j"}, "{}"};
  std::string good = ToJson(e);
  std::mt19937 rng(7);
  for (int i = 0; i < 20000; ++i) {
    auto parsed = LineageEventFromJson(Mutate(good, rng));
    if (!parsed) EXPECT_EQ(parsed.error().kind, ErrorKind::kCorrupt);
  }
}

}  // namespace
}  // namespace skade::lineage
