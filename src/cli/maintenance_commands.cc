// Commands on a table's history and files: refs, rollback, expiry, orphans,
// compaction and manifest rewrites.
#include <CLI/CLI.hpp>

#include <cstdio>

#include "commands.h"
#include "output.h"
#include "skade/io/file_io.h"
#include "skade/table/table.h"

namespace skade::cli {
namespace {

struct Args {
  std::string table, ref_action, ref_name, to_branch, older_than, format = "table", where;
  int64_t ref_snapshot = -1, rollback_to = 0, retain_last = 0, compact_target = 0;
  bool remove_orphans = false;
};

}  // namespace

void AddMaintenanceCommands(CLI::App& app, Context& ctx, CommandAction& action) {
  static Args a;
  for (std::string k : {"tag", "branch"}) {
    bool branch = k == "branch";
    auto* refcmd = app.add_subcommand(k, "create or drop a " + k + (branch ? " (or fast-forward it)" : ""));
    refcmd->add_option("TABLE", a.table)->required();
    refcmd->add_option("ACTION", a.ref_action, branch ? "create | drop | fast-forward" : "create | drop")->required();
    refcmd->add_option("NAME", a.ref_name)->required();
    auto* snap = AddInteger(refcmd, "--snapshot", a.ref_snapshot, 0, "snapshot id (default: current)");
    if (branch) refcmd->add_option("--to", a.to_branch, "with fast-forward: target branch");
    refcmd->callback([&, k, snap] { action = [&, k, snap]() -> Status {
      SKADE_ASSIGN_OR_RETURN(auto table, LoadTable(ctx, a.table));
      if (a.ref_action == "create") {
        std::optional<int64_t> id;
        if (snap->count()) id = a.ref_snapshot;
        SKADE_RETURN_IF_ERROR(table->CreateRef(a.ref_name, k, id));
        std::printf("created %s %s at snapshot %lld\n", k.c_str(), a.ref_name.c_str(),
                    static_cast<long long>(table->metadata()->refs.at(a.ref_name).snapshot_id));
      } else if (a.ref_action == "drop") {
        SKADE_RETURN_IF_ERROR(table->DropRef(a.ref_name, k));
        std::printf("dropped %s %s\n", k.c_str(), a.ref_name.c_str());
      } else if (a.ref_action == "fast-forward" && k == "branch") {
        if (a.to_branch.empty()) return InvalidArgument("fast-forward needs --to BRANCH");
        SKADE_RETURN_IF_ERROR(table->FastForward(a.ref_name, a.to_branch));
        std::printf("fast-forwarded %s to %s\n", a.ref_name.c_str(), a.to_branch.c_str());
      } else {
        return InvalidArgument("unknown " + k + " action '" + a.ref_action + "'");
      }
      return {};
    }; });
  }

  auto* rollback = app.add_subcommand("rollback", "point main at an earlier snapshot");
  rollback->add_option("TABLE", a.table)->required();
  AddInteger(rollback, "SNAPSHOT", a.rollback_to, 0, "snapshot id")->required();
  rollback->callback([&] { action = [&]() -> Status {
    SKADE_ASSIGN_OR_RETURN(auto table, LoadTable(ctx, a.table));
    SKADE_RETURN_IF_ERROR(table->Rollback(a.rollback_to));
    std::printf("rolled %s back to snapshot %lld\n", a.table.c_str(), static_cast<long long>(a.rollback_to));
    return {};
  }; });

  auto* expire = app.add_subcommand("expire", "expire old snapshots and delete the files only they used");
  expire->add_option("TABLE", a.table)->required();
  auto* older_opt = expire->add_option("--older-than", a.older_than, "timestamp (ISO 8601 or epoch ms)");
  auto* retain_opt = AddInteger(expire, "--retain-last", a.retain_last, 1, "keep at least N snapshots per branch");
  expire->callback([&, older_opt, retain_opt] { action = [&, older_opt, retain_opt]() -> Status {
    SKADE_ASSIGN_OR_RETURN(auto table, LoadTable(ctx, a.table));
    std::optional<int64_t> cutoff, retain;
    if (older_opt->count()) {
      SKADE_ASSIGN_OR_RETURN(cutoff, ParseTimestampMs(a.older_than));
    }
    if (retain_opt->count()) retain = a.retain_last;
    SKADE_ASSIGN_OR_RETURN(auto r, table->ExpireSnapshots(cutoff, retain));
    std::printf("expired %zu snapshots of %s, deleted %zu files\n", r.expired_snapshots.size(), a.table.c_str(),
                r.deleted_files.size());
    return {};
  }; });

  auto* orphans = app.add_subcommand("orphans", "list (or delete) files of the table's folder that no table uses");
  orphans->add_option("TABLE", a.table)->required();
  auto* orphan_age = orphans->add_option("--older-than", a.older_than, "only files older than this (default: 3 days ago)");
  orphans->add_flag("--delete", a.remove_orphans, "delete them");
  orphans->add_option("--format", a.format, "table, csv or jsonl")->capture_default_str();
  orphans->callback([&, orphan_age] { action = [&, orphan_age]() -> Status {
    SKADE_ASSIGN_OR_RETURN(Format f, ParseFormat(a.format, false));
    SKADE_ASSIGN_OR_RETURN(auto table, LoadTable(ctx, a.table));
    int64_t cutoff = NowMs() - 3LL * 24 * 3600 * 1000;
    if (orphan_age->count()) {
      SKADE_ASSIGN_OR_RETURN(cutoff, ParseTimestampMs(a.older_than));
    }
    SKADE_ASSIGN_OR_RETURN(auto list, table->OrphanFiles(cutoff, a.remove_orphans));
    Listing l{{"file", "action"}, {}, {false, false}};
    for (const auto& p : list) l.rows.push_back({p, a.remove_orphans ? "deleted" : "orphan"});
    PrintListing(l, f, stdout);
    return {};
  }; });

  auto* compact = app.add_subcommand("compact", "bin-pack small data files and fold in their deletes");
  compact->add_option("TABLE", a.table)->required();
  auto* target_opt = AddInteger(compact, "--target-file-size", a.compact_target, 1, "bytes");
  auto* where_opt = compact->add_option(
      "--where", a.where, "only the files that may hold a matching row (by partition and column bounds); whole files");
  compact->callback([&, target_opt, where_opt] { action = [&, target_opt, where_opt]() -> Status {
    SKADE_ASSIGN_OR_RETURN(auto table, LoadTable(ctx, a.table));
    std::optional<int64_t> target;
    if (target_opt->count()) target = a.compact_target;
    std::optional<std::string> where;
    if (where_opt->count()) where = a.where;
    SKADE_ASSIGN_OR_RETURN(auto r, table->Compact(target, where));
    if (!r.committed) std::printf("%s: nothing to compact\n", a.table.c_str());
    else std::printf("compacted %s: %lld rows rewritten into %zu files: snapshot %lld, commit_seq %lld\n",
                     a.table.c_str(), static_cast<long long>(r.rows_added), r.added_files.size(),
                     static_cast<long long>(r.snapshot_id), static_cast<long long>(r.commit_seq));
    return {};
  }; });

  auto* rewrite = app.add_subcommand("rewrite-manifests", "merge a table's manifests");
  rewrite->add_option("TABLE", a.table)->required();
  rewrite->callback([&] { action = [&]() -> Status {
    SKADE_ASSIGN_OR_RETURN(auto table, LoadTable(ctx, a.table));
    SKADE_ASSIGN_OR_RETURN(auto r, table->RewriteManifests());
    if (!r.committed) std::printf("%s: no snapshot, nothing to rewrite\n", a.table.c_str());
    else std::printf("rewrote the manifests of %s: snapshot %lld\n", a.table.c_str(), static_cast<long long>(r.snapshot_id));
    return {};
  }; });
}

}  // namespace skade::cli
