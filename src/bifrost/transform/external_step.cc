// The part of an out-of-process custom step that is the same for every runner: which
// columns go out, whether the reply is what the step declared, and the output steps.
#include "bifrost/transform/external_step.h"

#include <arrow/api.h>

#include <algorithm>
#include <charconv>

#include "skade/table/arrow_internal.h"

namespace bifrost {

std::string StepSettings::String(const std::string& key, const std::string& fallback,
                                 bool required) {
  known_.insert(key);
  auto it = step_.settings.find(key);
  if (it == step_.settings.end() || it->second.empty()) {
    if (required) problems_.push_back(step_.runner + " setting '" + key + "' is missing");
    return fallback;
  }
  return it->second;
}

int64_t StepSettings::Int(const std::string& key, int64_t fallback, int64_t min, int64_t max) {
  known_.insert(key);
  auto it = step_.settings.find(key);
  if (it == step_.settings.end()) return fallback;
  const std::string& s = it->second;
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v < min || v > max) {
    problems_.push_back(step_.runner + " setting '" + key + "' is '" + s +
                        "', not a whole number from " + std::to_string(min) + " to " +
                        std::to_string(max));
    return fallback;
  }
  return v;
}

Status StepSettings::Check() const {
  std::vector<std::string> out = problems_;
  for (const auto& [key, value] : step_.settings)
    if (!known_.contains(key)) {
      std::string list;
      for (const auto& k : known_) list += (list.empty() ? "" : ", ") + k;
      out.push_back("unknown " + step_.runner + " setting '" + key + "' (settings: " + list + ")");
    }
  if (out.empty()) return {};
  return skade::InvalidArgument(skade::JoinProblems(out));
}

Result<std::unique_ptr<RowRunner>> MakeRowRunner(const CustomStep& step) {
  if (step.runner == "flight") return MakeFlightRunner(step);
  if (step.runner == "wasm") return MakeWasmRunner(step);
  return skade::InvalidArgument("unknown runner '" + step.runner + "' (runners: flight, wasm)");
}

ExternalStep::ExternalStep(std::string name, std::vector<std::string> columns,
                           std::shared_ptr<arrow::Schema> declared,
                           std::unique_ptr<RowRunner> runner, CompiledTable output)
    : name_(std::move(name)),
      columns_(std::move(columns)),
      declared_(std::move(declared)),
      runner_(std::move(runner)),
      output_(std::move(output)) {}

namespace {

std::string Describe(const arrow::Schema& schema) {
  std::string out;
  for (const auto& f : schema.fields())
    out += (out.empty() ? "" : ", ") + f->name() + ": " + f->type()->ToString() +
           (f->nullable() ? "" : " not null");
  return out.empty() ? "no columns" : out;
}

}  // namespace

Result<GraphMutation> ExternalStep::Apply(const TransformContext& ctx,
                                          const std::shared_ptr<arrow::Table>& rows) const {
  const std::string where = "custom step '" + name_ + "' of table " + ctx.table.ToString();
  std::shared_ptr<arrow::Table> input = rows;
  if (!columns_.empty()) {
    std::vector<int> indices;
    for (const auto& c : columns_) indices.push_back(rows->schema()->GetFieldIndex(c));
    // Changelog rows keep their change columns, so a reply may route deletes too.
    for (const char* meta : {"_change_type", "_change_ordinal"})
      if (int i = rows->schema()->GetFieldIndex(meta);
          i >= 0 && std::find(indices.begin(), indices.end(), i) == indices.end())
        indices.push_back(i);
    SKADE_ARROW_ASSIGN(input, rows->SelectColumns(indices), where + ": selecting its columns");
  }
  auto reply = runner_->Run(input);
  if (!reply) return std::unexpected(std::move(reply).error().WithContext(where));
  const auto& got = *(*reply)->schema();
  bool same = got.num_fields() == declared_->num_fields();
  for (int i = 0; same && i < got.num_fields(); ++i)
    same = got.field(i)->name() == declared_->field(i)->name() &&
           got.field(i)->type()->Equals(*declared_->field(i)->type());
  if (!same)
    return skade::InvalidArgument(where + ": the reply's columns (" + Describe(got) +
                                  ") are not the declared schema (" + Describe(*declared_) + ")");
  for (int i = 0; i < got.num_fields(); ++i)
    if (!declared_->field(i)->nullable() && (*reply)->column(i)->null_count() > 0)
      return skade::InvalidArgument(where + ": the reply has nulls in required column '" +
                                    got.field(i)->name() + "'");
  auto m = output_.Apply(*reply);
  if (!m) return std::unexpected(std::move(m).error().WithContext(where));
  return m;
}

}  // namespace bifrost
