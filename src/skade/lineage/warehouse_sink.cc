#include "skade/lineage/warehouse_sink.h"

#include <arrow/api.h>

#include <algorithm>
#include <charconv>
#include <set>

#include "skade/io/file_io.h"
#include "skade/lineage/lineage_recorder.h"
#include "skade/table/arrow_internal.h"
#include "skade/table/scan.h"
#include "skade/table/snapshot_producer.h"
#include "skade/table/table.h"

namespace skade::lineage {
namespace {

// The snapshot-summary entry recording the last commit_seq whose event the table holds.
constexpr const char* kDeliveredSeqKey = "skade.lineage.commit-seq";
constexpr const char* kDeliveredInboxKey = "skade.lineage.inbox-seq";
// Set on every delivery from the one that built the catalog's event-id index on: the
// index then holds the id of every row (a table without it, or made anew, is indexed
// once by reading its ids).
constexpr const char* kIdsIndexedKey = "skade.lineage.ids-indexed";
constexpr const char* kSchemaSpec =
    "event_id:string!, event_time:timestamptz!, operation:string!, actor:string, commit_seq:long, "
    "run_id:string, job_namespace:string, job_name:string, inputs:string, outputs:string, event:string!";
constexpr int kMaxFlushAttempts = 20;

Result<std::unique_ptr<Table>> LoadOrCreateEventsTable(Catalog& catalog) {
  TableIdent ident = LineageEventsTable();
  auto loaded = Table::Load(catalog, ident);
  if (loaded || loaded.error().kind != ErrorKind::kNotFound) return loaded;
  // Another process may create them at the same moment: AlreadyExists is success.
  if (auto st = catalog.CreateNamespace(ident.ns); !st && st.error().kind != ErrorKind::kAlreadyExists)
    return std::unexpected(st.error());
  SKADE_ASSIGN_OR_RETURN(Schema schema, ParseSchemaSpec(kSchemaSpec));
  SKADE_ASSIGN_OR_RETURN(PartitionSpec spec, ParsePartitionSpec("day(event_time)", schema));
  if (auto created = catalog.CreateTable(ident, schema, spec, {});
      !created && created.error().kind != ErrorKind::kAlreadyExists)
    return std::unexpected(created.error());
  return Table::Load(catalog, ident);
}

// The newest snapshot's value of a summary key (appends by other engines do not
// carry skade's keys, so older snapshots are looked at too).
const std::string* SummaryValue(const TableMetadata& m, const char* key) {
  for (const Snapshot* s = m.CurrentSnapshot(); s;
       s = s->parent_snapshot_id ? m.SnapshotById(*s->parent_snapshot_id) : nullptr)
    if (auto it = s->summary.find(key); it != s->summary.end()) return &it->second;
  return nullptr;
}

// A delivered position (commit_seq, or inbox seq).
int64_t DeliveredSeq(const TableMetadata& m, const char* key = kDeliveredSeqKey) {
  const std::string* text = SummaryValue(m, key);
  int64_t seq = 0;
  if (text && std::from_chars(text->data(), text->data() + text->size(), seq).ec == std::errc()) return seq;
  return 0;
}

std::string RefsJson(const std::vector<DatasetRef>& refs) {
  LineageEvent only;
  only.inputs = refs;
  // The refs array of an event's JSON, reusing its serialiser.
  std::string json = ToJson(only);
  auto start = json.find("\"inputs\":") + 9;
  auto end = json.find("],\"", start);
  return json.substr(start, end + 1 - start);
}

Result<std::shared_ptr<arrow::Table>> ToArrow(const std::vector<LineageEvent>& events) {
  arrow::StringBuilder id, op, actor, run, job_ns, job_name, inputs, outputs, event;
  arrow::TimestampBuilder time(arrow::timestamp(arrow::TimeUnit::MICRO, "UTC"), arrow::default_memory_pool());
  arrow::Int64Builder seq;
  auto opt = [](arrow::StringBuilder& b, const std::optional<std::string>& v) {
    return v ? b.Append(*v) : b.AppendNull();
  };
  for (const auto& e : events) {
    SKADE_ARROW_RETURN(id.Append(e.event_id), "lineage events");
    SKADE_ARROW_RETURN(time.Append(e.ts_ms * 1000), "lineage events");
    SKADE_ARROW_RETURN(op.Append(e.operation), "lineage events");
    SKADE_ARROW_RETURN(actor.Append(e.actor), "lineage events");
    SKADE_ARROW_RETURN(e.commit_seq ? seq.Append(*e.commit_seq) : seq.AppendNull(), "lineage events");
    SKADE_ARROW_RETURN(opt(run, e.run_id), "lineage events");
    SKADE_ARROW_RETURN(opt(job_ns, e.job ? std::optional(e.job->ns) : std::nullopt), "lineage events");
    SKADE_ARROW_RETURN(opt(job_name, e.job ? std::optional(e.job->name) : std::nullopt), "lineage events");
    SKADE_ARROW_RETURN(inputs.Append(RefsJson(e.inputs)), "lineage events");
    SKADE_ARROW_RETURN(outputs.Append(RefsJson(e.outputs)), "lineage events");
    SKADE_ARROW_RETURN(event.Append(ToJson(e)), "lineage events");
  }
  std::vector<std::shared_ptr<arrow::Array>> arrays(11);
  int i = 0;
  for (arrow::ArrayBuilder* b : std::initializer_list<arrow::ArrayBuilder*>{
           &id, &time, &op, &actor, &seq, &run, &job_ns, &job_name, &inputs, &outputs, &event}) {
    SKADE_ARROW_RETURN(b->Finish(&arrays[i++]), "lineage events");
  }
  auto schema = arrow::schema({arrow::field("event_id", arrow::utf8()),
                               arrow::field("event_time", arrow::timestamp(arrow::TimeUnit::MICRO, "UTC")),
                               arrow::field("operation", arrow::utf8()), arrow::field("actor", arrow::utf8()),
                               arrow::field("commit_seq", arrow::int64()), arrow::field("run_id", arrow::utf8()),
                               arrow::field("job_namespace", arrow::utf8()), arrow::field("job_name", arrow::utf8()),
                               arrow::field("inputs", arrow::utf8()), arrow::field("outputs", arrow::utf8()),
                               arrow::field("event", arrow::utf8())});
  return arrow::Table::Make(schema, arrays);
}

template <typename ArrayType>
void CollectStrings(const arrow::Array& array, std::vector<std::optional<std::string>>& out) {
  const auto& a = static_cast<const ArrayType&>(array);
  for (int64_t i = 0; i < a.length(); ++i)
    out.push_back(a.IsNull(i) ? std::nullopt : std::optional<std::string>(std::string(a.GetView(i))));
}

Result<std::vector<std::optional<std::string>>> StringColumn(const arrow::Table& table, const std::string& name) {
  auto column = table.GetColumnByName(name);
  if (!column) return Corrupt("lineage events table has no column " + name);
  std::vector<std::optional<std::string>> out;
  for (const auto& chunk : column->chunks()) {
    if (chunk->type_id() == arrow::Type::STRING) CollectStrings<arrow::StringArray>(*chunk, out);
    else if (chunk->type_id() == arrow::Type::LARGE_STRING) CollectStrings<arrow::LargeStringArray>(*chunk, out);
    else return Corrupt("lineage events column " + name + " is not a string column");
  }
  return out;
}

Result<std::vector<std::optional<std::string>>> ReadColumn(Table& table, const std::string& name) {
  SKADE_ASSIGN_OR_RETURN(auto data, table.NewScan().Select({name}).ToTable());
  return StringColumn(*data, name);
}

bool Names(const LineageEvent& e, const std::string& dataset) {
  auto match = [&](const DatasetRef& r) { return r.Key() == dataset || r.table == dataset; };
  return std::any_of(e.inputs.begin(), e.inputs.end(), match) ||
         std::any_of(e.outputs.begin(), e.outputs.end(), match);
}

}  // namespace

TableIdent LineageEventsTable() { return TableIdent{kLineageNamespace, "lineage_events"}; }

Result<std::vector<LineageEvent>> ReadStoredEvents(Catalog& catalog, const EventFilter& filter) {
  auto table = Table::Load(catalog, LineageEventsTable());
  if (!table && table.error().kind == ErrorKind::kNotFound) return std::vector<LineageEvent>();
  if (!table) return std::unexpected(table.error());
  SKADE_ASSIGN_OR_RETURN(auto rows, ReadColumn(**table, "event"));
  std::vector<LineageEvent> out;
  std::set<std::string> seen;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (!rows[i]) continue;
    auto e = LineageEventFromJson(*rows[i]);
    if (!e) return std::unexpected(e.error().WithContext(LineageEventsTable().ToString()));
    if (filter.since_ms && e->ts_ms < *filter.since_ms) continue;
    if (filter.until_ms && e->ts_ms >= *filter.until_ms) continue;
    if (filter.dataset && !Names(*e, *filter.dataset)) continue;
    if (seen.insert(e->event_id).second) out.push_back(std::move(*e));
  }
  std::sort(out.begin(), out.end(), [](const LineageEvent& a, const LineageEvent& b) {
    return std::tie(a.ts_ms, a.event_id) < std::tie(b.ts_ms, b.event_id);
  });
  return out;
}

Status WarehouseSink::Write(const std::vector<LineageEvent>& events) {
  std::lock_guard lock(mu_);
  // Events of commits are in the commit log already; Flush reads them from there.
  for (const auto& e : events)
    if (!e.commit_seq) ingested_.push_back(e);
  return {};
}

Result<std::optional<int64_t>> WarehouseSink::DeliveredThrough() {
  auto table = Table::Load(catalog_, LineageEventsTable());
  if (!table && table.error().kind == ErrorKind::kNotFound) return std::optional<int64_t>(0);
  if (!table) return std::unexpected(table.error());
  return std::optional<int64_t>(DeliveredSeq(*(*table)->metadata()));
}

Result<size_t> WarehouseSink::Pending() {
  int64_t delivered = 0, inbox_delivered = 0;
  if (auto table = Table::Load(catalog_, LineageEventsTable())) {
    delivered = DeliveredSeq(*(*table)->metadata());
    inbox_delivered = DeliveredSeq(*(*table)->metadata(), kDeliveredInboxKey);
  } else if (table.error().kind != ErrorKind::kNotFound) {
    return std::unexpected(table.error());
  }
  SKADE_ASSIGN_OR_RETURN(auto logged, catalog_.AnnotationsSince(delivered));
  // Entries behind the table's inbox watermark were delivered; a trim is due, not a flush.
  SKADE_ASSIGN_OR_RETURN(int64_t inbox, catalog_.CountLineageInboxSince(inbox_delivered));
  std::lock_guard lock(mu_);
  return logged.size() + ingested_.size() + static_cast<size_t>(inbox);
}

Status WarehouseSink::Flush() {
  std::lock_guard lock(mu_);
  for (int attempt = 1;; ++attempt) {
    bool conflicted = false;
    Status st = FlushOnce(conflicted);
    if (!conflicted || attempt >= kMaxFlushAttempts) return st;
  }
}

Status WarehouseSink::FlushOnce(bool& conflicted) {
  SKADE_ASSIGN_OR_RETURN(std::optional<int64_t> already, DeliveredThrough());
  int64_t delivered = already.value_or(0);
  SKADE_ASSIGN_OR_RETURN(std::vector<LineageEvent> batch, EventsFromLog(catalog_, delivered));
  // The inbox holds received events already durable; rows a flush delivered but did
  // not get to trim (a crash) are behind the table's inbox watermark and are skipped.
  SKADE_ASSIGN_OR_RETURN(auto inbox, catalog_.LineageInboxSince(0));
  if (batch.empty() && ingested_.empty() && inbox.empty()) return {};
  SKADE_ASSIGN_OR_RETURN(auto table, LoadOrCreateEventsTable(catalog_));
  const TableMetadata& m = *table->metadata();
  if (DeliveredSeq(m) != delivered) {
    conflicted = true;  // another process delivered in between: start over
    return MakeError(ErrorKind::kCommitConflict, "lineage events were delivered concurrently");
  }
  int64_t through = batch.empty() ? delivered : *batch.back().commit_seq;
  int64_t inbox_delivered = DeliveredSeq(m, kDeliveredInboxKey), inbox_through = inbox_delivered;
  std::vector<LineageEvent> received = ingested_;
  for (const auto& [seq, text] : inbox) {
    inbox_through = std::max(inbox_through, seq);
    if (seq <= inbox_delivered) continue;
    auto e = LineageEventFromJson(text);
    if (!e) return std::unexpected(e.error().WithContext("lineage inbox entry " + std::to_string(seq)));
    received.push_back(std::move(*e));
  }
  if (!SummaryValue(m, kIdsIndexedKey)) {
    SKADE_ASSIGN_OR_RETURN(auto stored_ids, ReadColumn(*table, "event_id"));
    std::vector<std::string> ids;
    for (auto& id : stored_ids)
      if (id) ids.push_back(std::move(*id));
    SKADE_RETURN_IF_ERROR(catalog_.RecordLineageEventIds(ids, /*replace_all=*/true));
  }
  if (!received.empty()) {
    std::vector<std::string> ids;
    for (const auto& e : received) ids.push_back(e.event_id);
    SKADE_ASSIGN_OR_RETURN(auto unknown, catalog_.UnknownLineageEventIds(ids));
    std::set<std::string> fresh(unknown.begin(), unknown.end());
    for (const auto& e : received)
      if (fresh.erase(e.event_id)) batch.push_back(e);  // erase: once, if received twice
  }
  if (batch.empty()) {
    ingested_.clear();
    if (inbox_through > 0) SKADE_RETURN_IF_ERROR(catalog_.TrimLineageInbox(inbox_through));
    return {};
  }
  SKADE_ASSIGN_OR_RETURN(auto data, ToArrow(batch));
  SKADE_ASSIGN_OR_RETURN(StagedAppend staged, table->StageAppend(data));
  FileChange change;
  change.operation = "append";
  change.added = staged.files;
  change.properties[kDeliveredSeqKey] = std::to_string(through);
  if (inbox_through > 0) change.properties[kDeliveredInboxKey] = std::to_string(inbox_through);
  change.properties[kIdsIndexedKey] = "true";
  // Another process delivering the same log rows must not land twice.
  change.validate_no_new_data_since = m.current_snapshot_id.value_or(0);
  std::vector<std::pair<LoadedTable, FileChange>> changes;
  changes.emplace_back(LoadedTable{table->ident(), table->metadata_location(), table->metadata()}, std::move(change));
  auto produced = CommitChanges(catalog_, std::move(changes));
  if (!produced) {  // CommitChanges removed the staged files (unless the outcome is unknown)
    conflicted = produced.error().kind == ErrorKind::kCommitConflict;
    return std::unexpected(produced.error());
  }
  ingested_.clear();
  // After the commit: a crash in between leaves ids out of the index, so an event sent
  // again may be stored twice, which readers fold (never one lost).
  std::vector<std::string> ids;
  for (const auto& e : batch) ids.push_back(e.event_id);
  SKADE_RETURN_IF_ERROR(catalog_.RecordLineageEventIds(ids));
  if (inbox_through > 0) SKADE_RETURN_IF_ERROR(catalog_.TrimLineageInbox(inbox_through));
  return {};
}

}  // namespace skade::lineage
