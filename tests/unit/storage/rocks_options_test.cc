#include "storage/rocks_options.h"

#include <rocksdb/convenience.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <memory>

#include "storage/compaction_filter.h"

using rockcache::storage::FilterContext;
using rockcache::storage::MakeRocksOpenOptions;
using rockcache::storage::Options;

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace rocks_options_test {

namespace {

bool Lz4Built() {
  auto supported = rocksdb::GetSupportedCompressions();
  return std::find(supported.begin(), supported.end(), rocksdb::kLZ4Compression) != supported.end();
}

}  // namespace

TEST_CASE("level 0 is written uncompressed unless rocksdb-compress-level0 is set",
          "[storage][options]") {
  if (!Lz4Built()) {
    WARN("this RocksDB has no LZ4: nothing to check");
    return;
  }
  Options options;
  options.compression = "lz4";
  auto open = MakeRocksOpenOptions(options, std::make_shared<FilterContext>());
  REQUIRE(open.ok());
  for (const auto& family : open->column_families) {
    INFO(family.name);
    const auto& levels = family.options.compression_per_level;
    REQUIRE(levels.size() == static_cast<size_t>(family.options.num_levels));
    CHECK(levels[0] == rocksdb::kNoCompression);
    for (size_t i = 1; i < levels.size(); ++i) CHECK(levels[i] == rocksdb::kLZ4Compression);
  }

  options.compress_level0 = true;
  open = MakeRocksOpenOptions(options, std::make_shared<FilterContext>());
  REQUIRE(open.ok());
  for (const auto& family : open->column_families) {
    INFO(family.name);
    CHECK(family.options.compression_per_level.empty());
    CHECK(family.options.compression == rocksdb::kLZ4Compression);
  }

  options.compress_level0 = false;
  options.compression = "none";
  open = MakeRocksOpenOptions(options, std::make_shared<FilterContext>());
  REQUIRE(open.ok());
  for (const auto& family : open->column_families) {
    CHECK(family.options.compression_per_level.empty());
    CHECK(family.options.compression == rocksdb::kNoCompression);
  }
}

}  // namespace rocks_options_test
