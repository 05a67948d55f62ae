#include "skade/table/manifest_io.h"

#include "skade/io/file_io.h"

namespace skade {

Result<std::vector<ManifestFile>> LoadManifestList(const Snapshot& snapshot, FileIO& io) {
  SKADE_ASSIGN_OR_RETURN(std::string bytes, io.ReadFile(snapshot.manifest_list));
  auto list = ReadManifestList(bytes);
  if (!list)
    return std::unexpected(
        std::move(list).error().WithContext("manifest list " + LocalPath(snapshot.manifest_list)));
  return list;
}

Result<std::vector<ManifestEntry>> LoadManifest(const ManifestFile& mf, const TableMetadata& m,
                                                const Schema& schema, FileIO& io) {
  const PartitionSpec* spec = m.SpecById(mf.partition_spec_id);
  if (!spec)
    return Corrupt("manifest " + LocalPath(mf.manifest_path) + " names unknown partition spec " +
                   std::to_string(mf.partition_spec_id));
  SKADE_ASSIGN_OR_RETURN(std::string bytes, io.ReadFile(mf.manifest_path));
  auto entries = ReadManifest(bytes, mf, m.SchemaForSpec(*spec, schema), *spec);
  if (!entries)
    return std::unexpected(
        std::move(entries).error().WithContext("manifest " + LocalPath(mf.manifest_path)));
  return entries;
}

Result<std::vector<LiveFile>> LiveFiles(const TableMetadata& m, const Snapshot& snapshot, FileIO& io,
                                        bool data_only) {
  SKADE_ASSIGN_OR_RETURN(auto list, LoadManifestList(snapshot, io));
  std::vector<LiveFile> out;
  for (const auto& mf : list) {
    if (data_only && mf.content != 0) continue;
    SKADE_ASSIGN_OR_RETURN(auto entries, LoadManifest(mf, m, *m.schema(), io));
    for (auto& e : entries)
      if (e.status != EntryStatus::kDeleted)
        out.push_back(LiveFile{std::move(e.data_file), e.sequence_number.value_or(0),
                               e.snapshot_id.value_or(mf.added_snapshot_id)});
  }
  return out;
}

}  // namespace skade
