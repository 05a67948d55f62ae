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

}  // namespace skade
