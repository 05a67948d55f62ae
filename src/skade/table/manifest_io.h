// Reading a snapshot's manifest list and manifests through a FileIO, with errors
// that name the file: the one place every reader of table history goes through.
#pragma once

#include <vector>

#include "skade/common/result.h"
#include "skade/format/manifest.h"
#include "skade/format/table_metadata.h"

namespace skade {

class FileIO;

/// The manifests a snapshot lists. Errors: kNotFound/kIoError/kCorrupt naming the file.
Result<std::vector<ManifestFile>> LoadManifestList(const Snapshot& snapshot, FileIO& io);

/// The entries of one manifest, read with its own partition spec and `schema`.
/// Errors: kCorrupt for an unknown spec or bad bytes, naming the manifest.
Result<std::vector<ManifestEntry>> LoadManifest(const ManifestFile& manifest,
                                                const TableMetadata& metadata, const Schema& schema,
                                                FileIO& io);

/// A data or delete file a snapshot reads, with its data sequence number and the
/// snapshot that added it.
struct LiveFile {
  DataFile file;
  int64_t sequence_number = 0;
  int64_t added_snapshot_id = 0;
};

/// The files `snapshot` reads (entries not deleted), in manifest-list order; with
/// `data_only`, the delete manifests are not read. Errors: as LoadManifest.
Result<std::vector<LiveFile>> LiveFiles(const TableMetadata& metadata, const Snapshot& snapshot, FileIO& io,
                                        bool data_only = false);

}  // namespace skade
