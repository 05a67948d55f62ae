// Replays every checked-in fuzz corpus through its fuzz target, so the seeds (and any
// crashers added after a fix) run with the unit tests.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "fuzz_targets.h"

namespace skade::fuzz {
namespace {

struct Corpus {
  const char* directory;  // under tests/fuzz/corpus/
  int (*target)(const uint8_t* data, size_t size);
};

// One line per fuzz target.
constexpr Corpus kCorpora[] = {
    {"avro_container", FuzzAvroContainer},
    {"expression_parser", FuzzExpressionParser},
    {"metadata_json", FuzzMetadataJson},
    {"manifest_list", FuzzManifestList},
    {"mapping_file", FuzzMappingFile},
    {"rest_commit", FuzzRestCommit},
    {"openlineage_event", FuzzOpenLineageEvent},
    {"wasm_reply", FuzzWasmReply},
    {"deletion_vector", FuzzDeletionVector},
};

class CorpusReplayTest : public ::testing::TestWithParam<Corpus> {};

TEST_P(CorpusReplayTest, EveryFileRunsClean) {
  const auto dir =
      std::filesystem::path(SKADE_SOURCE_DIR) / "tests/fuzz/corpus" / GetParam().directory;
  ASSERT_TRUE(std::filesystem::is_directory(dir)) << dir;
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    if (entry.is_regular_file()) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  EXPECT_FALSE(files.empty()) << dir;
  for (const auto& path : files) {
    SCOPED_TRACE(path.string());
    std::ifstream in(path, std::ios::binary);
    ASSERT_TRUE(in.good());
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    // A broken invariant aborts inside the target; reaching the next line is the pass.
    EXPECT_EQ(GetParam().target(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()), 0);
  }
}

INSTANTIATE_TEST_SUITE_P(AllTargets, CorpusReplayTest, ::testing::ValuesIn(kCorpora),
                         [](const auto& info) { return std::string(info.param.directory); });

}  // namespace
}  // namespace skade::fuzz
