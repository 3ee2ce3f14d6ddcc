// DUMP's payload of a key, shared by DUMP and MIGRATE (server/commands/dump.cc). Worker threads.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "config/status.h"
#include "server/rdb/value_codec.h"

namespace rockcache::config {
class Config;
}

namespace rockcache::server {

struct CommandContext;

// The encoding thresholds of `config`'s options (hash-max-listpack-entries...).
rdb::EncodingLimits DumpLimits(const config::Config& config);
// The DUMP payload of `key` (nullopt when absent), reading at most max_bytes of elements
// (OverLimit past it). BLOCKS on storage.
StatusOr<std::optional<std::string>> DumpKey(CommandContext& ctx, std::string_view key,
                                             uint64_t max_bytes);

}  // namespace rockcache::server
