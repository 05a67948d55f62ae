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
  auto entries = ReadManifest(bytes, mf, schema, *spec);
  if (!entries)
    return std::unexpected(
        std::move(entries).error().WithContext("manifest " + LocalPath(mf.manifest_path)));
  return entries;
}

}  // namespace skade
