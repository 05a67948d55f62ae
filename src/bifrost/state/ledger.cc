#include "bifrost/state/ledger.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "skade/io/file_io.h"

namespace bifrost {
namespace {

nlohmann::json StateToJson(const TableState& s) {
  nlohmann::json j = nlohmann::json::object();
  j["snapshot_id"] = s.snapshot_id ? nlohmann::json(*s.snapshot_id) : nlohmann::json(nullptr);
  j["done_files"] = s.done_files;
  return j;
}

Result<TableState> StateFromJson(const nlohmann::json& j, const std::string& where) {
  if (!j.is_object()) return skade::Corrupt(where + ": a table's state must be an object");
  TableState s;
  if (j.contains("snapshot_id") && j["snapshot_id"].is_number_integer())
    s.snapshot_id = j["snapshot_id"].get<int64_t>();
  if (j.contains("done_files") && j["done_files"].is_array())
    for (const auto& f : j["done_files"]) s.done_files.push_back(f.get<std::string>());
  return s;
}

// A file ledger's read-modify-writes, one at a time in the process: the round loop
// advances cursors while the Airflow delivery thread dequeues, each through its own
// FileLedger on the same file.
std::mutex file_writes;

}  // namespace

// The file's member holding the outbox: {"next": N, "events": [{"seq": S, "event": {...}}]}.
// Not a table name (those are namespace.table).
constexpr const char* kOutboxMember = "$outbox";

Result<nlohmann::json> FileLedger::ReadJson() {
  std::ifstream in(path_);
  if (!in) return nlohmann::json::object();  // never written: every cursor is empty
  std::stringstream ss;
  ss << in.rdbuf();
  auto j = nlohmann::json::parse(ss.str(), nullptr, false);
  if (j.is_discarded() || !j.is_object())
    return skade::Corrupt("state ledger " + path_ + " is not a JSON object");
  if (j.contains(kOutboxMember) &&
      (!j[kOutboxMember].is_object() || !j[kOutboxMember].value("events", nlohmann::json()).is_array()))
    return skade::Corrupt("state ledger " + path_ + ": " + kOutboxMember + " is not an outbox");
  return j;
}

Status FileLedger::Write(const nlohmann::json& j) {
  auto written = skade::ReplaceFile(path_, j.dump(2) + "\n");
  if (!written) return std::unexpected(written.error().WithContext("state ledger"));
  return {};
}

Result<std::map<std::string, TableState>> FileLedger::Read() {
  std::map<std::string, TableState> out;
  SKADE_ASSIGN_OR_RETURN(auto j, ReadJson());
  for (const auto& [table, state] : j.items()) {
    if (table == kOutboxMember) continue;
    SKADE_ASSIGN_OR_RETURN(out[table], StateFromJson(state, "state ledger " + path_));
  }
  return out;
}

Result<TableState> FileLedger::Get(const std::string& table) {
  SKADE_ASSIGN_OR_RETURN(auto all, Read());
  auto it = all.find(table);
  return it == all.end() ? TableState{} : it->second;
}

Status FileLedger::Advance(const std::string& table, const TableState& state) {
  std::lock_guard lock(file_writes);
  SKADE_ASSIGN_OR_RETURN(auto j, ReadJson());
  j[table] = StateToJson(state);
  return Write(j);
}

Status FileLedger::AdvanceAndEnqueue(const std::string& table, const TableState& state,
                                     const std::string& event) {
  auto body = nlohmann::json::parse(event, nullptr, false);
  if (body.is_discarded()) return skade::Internal("outbox event is not JSON: " + event);
  std::lock_guard lock(file_writes);
  SKADE_ASSIGN_OR_RETURN(auto j, ReadJson());
  j[table] = StateToJson(state);
  auto& outbox = j[kOutboxMember];
  if (!outbox.is_object()) outbox = {{"next", 1}, {"events", nlohmann::json::array()}};
  int64_t seq = outbox.value("next", int64_t{1});
  outbox["next"] = seq + 1;
  outbox["events"].push_back({{"seq", seq}, {"event", body}});
  return Write(j);
}

Result<std::vector<OutboxEntry>> FileLedger::Outbox() {
  SKADE_ASSIGN_OR_RETURN(auto j, ReadJson());
  std::vector<OutboxEntry> out;
  if (!j.contains(kOutboxMember)) return out;
  for (const auto& e : j[kOutboxMember]["events"]) {
    if (!e.is_object() || !e.value("seq", nlohmann::json()).is_number_integer() || !e.contains("event"))
      return skade::Corrupt("state ledger " + path_ + ": an outbox entry has no seq or event");
    out.push_back({e["seq"].get<int64_t>(), e["event"].dump()});
  }
  return out;
}

Status FileLedger::Dequeue(int64_t seq) {
  std::lock_guard lock(file_writes);
  SKADE_ASSIGN_OR_RETURN(auto j, ReadJson());
  if (!j.contains(kOutboxMember)) return {};
  auto& events = j[kOutboxMember]["events"];
  auto before = events.size();
  for (auto it = events.begin(); it != events.end(); ++it)
    if (it->is_object() && it->value("seq", int64_t{-1}) == seq) {
      events.erase(it);
      break;
    }
  if (events.size() == before) return {};
  return Write(j);
}

Result<std::string> FileLedger::ToJson() {
  SKADE_ASSIGN_OR_RETURN(auto all, Read());
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [t, s] : all) j[t] = StateToJson(s);
  return j.dump(2);
}

Result<TableState> RedisLedger::Get(const std::string& table) {
  SKADE_ASSIGN_OR_RETURN(auto reply, connection_.Command({"HGET", key_, table}));
  if (reply.kind == Reply::Kind::kNil) return TableState{};
  auto j = nlohmann::json::parse(reply.text, nullptr, false);
  if (j.is_discarded())
    return skade::Corrupt("state ledger " + Describe() + ": field " + table + " is not JSON");
  return StateFromJson(j, "state ledger " + Describe());
}

Status RedisLedger::Advance(const std::string& table, const TableState& state) {
  return FencedAdvance(table, state, "");
}

Status RedisLedger::AdvanceAndEnqueue(const std::string& table, const TableState& state,
                                      const std::string& event) {
  return FencedAdvance(table, state, event);
}

Status RedisLedger::FencedAdvance(const std::string& table, const TableState& state,
                                  const std::string& event) {
  // Fenced: only the lease holder moves a cursor, so an instance that lost its lease
  // mid-round (stalled past the TTL) cannot set back what the new holder stored. The
  // outbox entry, if any, is written by the same script: both or neither.
  static const char* kFenced =
      "if ARGV[1] == '' or redis.call('GET', KEYS[2]) == ARGV[1] then "
      "redis.call('HSET', KEYS[1], ARGV[2], ARGV[3]) "
      "if ARGV[4] ~= '' then "
      "local seq = redis.call('INCR', KEYS[4]) redis.call('HSET', KEYS[3], seq, ARGV[4]) end "
      "return 1 end return 0";
  auto reply = connection_.Command({"EVAL", kFenced, "4", key_, key_ + ":lease", key_ + ":outbox",
                                    key_ + ":outbox:seq", token_, table,
                                    StateToJson(state).dump(), event});
  if (!reply)
    return std::unexpected(std::move(reply).error().WithContext("state ledger " + Describe()));
  if (reply->integer != 1)
    return skade::MakeError(skade::ErrorKind::kCommitConflict,
                            "state ledger " + Describe() + ": the round lease passed to another "
                            "instance before the cursor of " + table +
                            " was stored; the round will be replayed");
  return {};
}

Result<std::vector<OutboxEntry>> RedisLedger::Outbox() {
  auto reply = connection_.Command({"HGETALL", key_ + ":outbox"});
  if (!reply)
    return std::unexpected(std::move(reply).error().WithContext("state ledger " + Describe()));
  std::vector<OutboxEntry> out;
  for (size_t i = 0; i + 1 < reply->elements.size(); i += 2) {
    const std::string& field = reply->elements[i].text;
    int64_t seq = 0;
    auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), seq);
    if (ec != std::errc() || end != field.data() + field.size())
      return skade::Corrupt("state ledger " + Describe() + ": outbox field '" + field +
                            "' is not a sequence number");
    out.push_back({seq, reply->elements[i + 1].text});
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.seq < b.seq; });
  return out;
}

Status RedisLedger::Dequeue(int64_t seq) {
  auto reply = connection_.Command({"HDEL", key_ + ":outbox", std::to_string(seq)});
  if (!reply)
    return std::unexpected(std::move(reply).error().WithContext("state ledger " + Describe()));
  return {};
}

Result<std::string> RedisLedger::ToJson() {
  SKADE_ASSIGN_OR_RETURN(auto reply, connection_.Command({"HGETALL", key_}));
  nlohmann::json j = nlohmann::json::object();
  for (size_t i = 0; i + 1 < reply.elements.size(); i += 2) {
    auto v = nlohmann::json::parse(reply.elements[i + 1].text, nullptr, false);
    j[reply.elements[i].text] = v.is_discarded() ? nlohmann::json(reply.elements[i + 1].text) : v;
  }
  return j.dump(2);
}

Result<bool> FileLedger::AcquireRound(std::chrono::milliseconds) {
  if (lock_fd_ >= 0) return true;
  std::filesystem::path target(path_);
  std::error_code ec;
  if (target.has_parent_path()) std::filesystem::create_directories(target.parent_path(), ec);
  std::string lock = path_ + ".lock";
  int fd = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return skade::IoError("state ledger lock " + lock + ": " + std::strerror(errno));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd);
    return false;
  }
  lock_fd_ = fd;
  return true;
}

void FileLedger::ReleaseRound() {
  if (lock_fd_ < 0) return;
  ::close(lock_fd_);  // drops the flock
  lock_fd_ = -1;
}

Result<bool> RedisLedger::AcquireRound(std::chrono::milliseconds ttl) {
  if (token_.empty()) {
    std::random_device rd;
    token_ = std::to_string(::getpid()) + "-" + std::to_string(rd()) + std::to_string(rd());
  }
  // Extend the lease if it is ours, else take it if free.
  static const char* kAcquire =
      "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], "
      "ARGV[2]) end "
      "if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end return 0";
  auto reply = connection_.Command(
      {"EVAL", kAcquire, "1", key_ + ":lease", token_, std::to_string(ttl.count())});
  if (!reply)
    return std::unexpected(std::move(reply).error().WithContext("state ledger " + Describe()));
  return reply->integer == 1;
}

void RedisLedger::ReleaseRound() {
  if (token_.empty()) return;
  static const char* kRelease =
      "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return "
      "0";
  (void)connection_.Command({"EVAL", kRelease, "1", key_ + ":lease", token_});
}

}  // namespace bifrost
