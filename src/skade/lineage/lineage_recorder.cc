#include "skade/lineage/lineage_recorder.h"

#include <algorithm>
#include <utility>

#include "skade/lineage/lineage_scope.h"

namespace skade::lineage {
namespace {

bool IsLineageTable(const TableIdent& table) { return table.ns == kLineageNamespace; }

std::string OperationOf(const CommitRecord& record) {
  if (record.changes.size() > 1) return std::string(op::kRelease);
  const CommitRecord::Change& c = record.changes.front();
  if (c.action == "create") return std::string(op::kCreate);
  if (c.action == "drop") return std::string(op::kDrop);
  if (c.action == "rename") return std::string(op::kRename);
  if (!record.provenance.operation.empty()) return record.provenance.operation;
  if (c.operation == "append") return std::string(op::kAppend);
  if (c.operation == "overwrite") return std::string(op::kOverwrite);
  if (c.operation == "delete") return std::string(op::kDelete);
  if (c.operation == "schema-change") return std::string(op::kSchemaChange);
  if (c.operation == "replace" || c.operation == "expire") return std::string(op::kMaintenance);
  return std::string(op::kMetadataChange);
}

}  // namespace

std::optional<LineageEvent> MintEvent(const CommitRecord& record, const std::string& default_actor) {
  if (record.changes.empty() ||
      std::all_of(record.changes.begin(), record.changes.end(),
                  [](const CommitRecord::Change& c) { return IsLineageTable(c.table); }))
    return std::nullopt;
  LineageEvent e;
  e.event_id = NewEventId();
  e.actor = record.provenance.actor.empty() ? default_actor : record.provenance.actor;
  e.operation = OperationOf(record);
  e.ts_ms = record.ts_ms;
  e.commit_seq = record.changes.back().commit_seq;
  for (const auto& c : record.changes) {
    if (IsLineageTable(c.table)) continue;
    e.outputs.push_back(DatasetRef{c.table.ToString(), c.snapshot_id, std::nullopt});
    // A renamed table was derived from its former self.
    if (c.renamed_from) e.inputs.push_back(DatasetRef{c.renamed_from->ToString(), std::nullopt, std::nullopt});
  }
  for (const auto& in : record.provenance.inputs) {
    DatasetRef ref = ToDatasetRef(in);
    if (!ref.system && ref.table.starts_with(std::string(kLineageNamespace) + ".")) continue;
    // A writer reading its own table (an upsert looking up keys) is no edge.
    bool is_output = !ref.system && std::any_of(e.outputs.begin(), e.outputs.end(), [&](const DatasetRef& o) {
      return o.table == ref.table;
    });
    if (!is_output && std::find(e.inputs.begin(), e.inputs.end(), ref) == e.inputs.end())
      e.inputs.push_back(std::move(ref));
  }
  return e;
}

Result<std::vector<LineageEvent>> EventsFromLog(Catalog& catalog, int64_t after_seq) {
  SKADE_ASSIGN_OR_RETURN(auto rows, catalog.AnnotationsSince(after_seq));
  std::vector<LineageEvent> out;
  for (const auto& [seq, annotation] : rows) {
    auto event = LineageEventFromJson(annotation);
    if (!event) return std::unexpected(event.error().WithContext("commit log row " + std::to_string(seq)));
    out.push_back(std::move(*event));
  }
  return out;
}

LineageRecorder::LineageRecorder(Catalog& catalog, Options options)
    : catalog_(catalog), options_(std::move(options)) {
  catalog_.SetAnnotator(this);
}

LineageRecorder::~LineageRecorder() {
  catalog_.SetAnnotator(nullptr);
  if (options_.flush_on_close) (void)Flush();
}

void LineageRecorder::AddSink(std::shared_ptr<LineageSink> sink) {
  std::lock_guard lock(mu_);
  sinks_.push_back(std::move(sink));
}

std::optional<std::string> LineageRecorder::Annotate(const CommitRecord& record) {
  std::optional<LineageEvent> event = MintEvent(record, options_.default_actor);
  if (!event) return std::nullopt;
  return ToJson(*event);
}

void LineageRecorder::OnDurable(const CommitRecord& record, const std::string& annotation) {
  auto event = LineageEventFromJson(annotation);
  if (!event) return;  // minted by Annotate from the same bytes: cannot happen
  bool flush_now = false;
  {
    std::lock_guard lock(mu_);
    for (const auto& sink : sinks_)
      if (auto st = sink->Write({*event}); !st) NoteError(*sink, st.error());
    flush_now = ++unflushed_ >= options_.batch_size;
  }
  if (flush_now) (void)Flush();
}

Status LineageRecorder::Flush() {
  std::vector<std::shared_ptr<LineageSink>> sinks;
  {
    std::lock_guard lock(mu_);
    sinks = sinks_;
    unflushed_ = 0;
  }
  Status first;
  for (const auto& sink : sinks) {
    Status st = sink->Flush();
    if (!st) {
      std::lock_guard lock(mu_);
      NoteError(*sink, st.error());
      if (first) first = st;
    }
  }
  return first;
}

std::vector<std::string> LineageRecorder::TakeSinkErrors() {
  std::lock_guard lock(mu_);
  return std::exchange(errors_, {});
}

void LineageRecorder::NoteError(const LineageSink& sink, const Error& error) {
  errors_.push_back("lineage sink " + sink.name() + ": " + error.message);
}

}  // namespace skade::lineage
