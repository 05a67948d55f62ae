// Fuzz targets for every parser of untrusted bytes. Each returns 0 and aborts on a
// broken invariant; libFuzzer drivers (*_fuzz.cc) and corpus_replay_test.cc call them.
#pragma once

#include <cstddef>
#include <cstdint>

namespace skade::fuzz {

/// Reads an Avro container; if it parses, writes the records back with WriteContainer
/// and checks that they read back identical.
int FuzzAvroContainer(const uint8_t* data, size_t size);

/// Parses a row filter; if it parses, checks that ToString re-parses to the same text,
/// binds it against a fixed schema and runs the evaluators (metrics, projection,
/// partition and manifest evaluation) on it. Only kInvalidArgument errors are allowed.
int FuzzExpressionParser(const uint8_t* data, size_t size);

/// Parses table metadata JSON; if it parses, the serialized form must parse back to
/// the same serialization. Only kCorrupt errors are allowed.
int FuzzMetadataJson(const uint8_t* data, size_t size);

/// Reads a manifest list; if it parses, writing it back and reading again gives
/// the same manifests. Only kCorrupt errors are allowed.
int FuzzManifestList(const uint8_t* data, size_t size);

/// Parses a Bifröst mapping file as RON and as YAML; what parses must write as YAML and
/// as RON that both read back to the same mapping, and compiling it against a fixed table either works or says what is
/// wrong. Only kInvalidArgument (parse) and kInvalidArgument/kNotFound (compile) errors
/// are allowed; an exception escaping is a crash.
int FuzzMappingFile(const uint8_t* data, size_t size);

/// Applies a REST commit body (`requirements`, `updates`) to a fixed table and to no
/// table (a create by commit), and a create request to nothing; what applies must
/// serialize to metadata that parses back the same. Only kInvalidArgument,
/// kCommitConflict and kUnsupported errors are allowed.
int FuzzRestCommit(const uint8_t* data, size_t size);

/// Maps an OpenLineage event body to a lineage event; if it maps, the RunEvent made
/// from it maps again. Only kInvalidArgument errors are allowed.
int FuzzOpenLineageEvent(const uint8_t* data, size_t size);

/// Reads a WASM guest's reply as an Arrow IPC stream; what reads must validate in full,
/// and what the host would send of it must read back equal. Only kInvalidArgument errors,
/// each one line, are allowed.
int FuzzWasmReply(const uint8_t* data, size_t size);

/// Decodes a deletion vector blob twice: the bytes as they are, and the bytes after the
/// first two as a blob body with its length and CRC made right (so the roaring bitmap itself
/// is what varies; the first byte picks the data file's row count). What decodes must be
/// ascending and below the row count, and written again decode the same. Only kCorrupt
/// errors are allowed.
int FuzzDeletionVector(const uint8_t* data, size_t size);

}  // namespace skade::fuzz
