// The SCAN family (SCAN, HSCAN, SSCAN, ZSCAN): argument parsing (pure, any thread) and the one
// handler of HSCAN, SSCAN and ZSCAN.
#pragma once

#include <cstdint>
#include <string>

#include "server/commands/command.h"
#include "storage/store.h"

namespace rockcache::server {

// A SCAN cursor as Redis's parseScanCursorOrReply reads it (strtoul: "" is 0, "-1" wraps;
// leading space and trailing junk are refused). False means "ERR invalid cursor".
bool ParseScanCursor(const std::string& arg, uint64_t* cursor);

// [MATCH pattern] [COUNT count] from argv[first] on (pattern "*" and count 10 by default).
// Appends Redis's error and returns false on a bad option.
bool ParseScanOptions(const Args& argv, size_t first, std::string* pattern, uint64_t* count,
                      std::string* out);

// HSCAN/SSCAN/ZSCAN's arguments (argv[2] cursor, options from argv[3]) for a key that should
// hold `expected`. As Redis, bad options are reported only when the key holds that type: an
// absent key gets an empty scan and another type WRONGTYPE (both from the store), so the pattern
// falls back to "*". Returns false when the reply was written (an error).
bool ParseCollectionScan(CommandContext& ctx, const Args& argv, storage::KeyType expected,
                         uint64_t* cursor, std::string* pattern, uint64_t* count, std::string* out);

// HSCAN / SSCAN / ZSCAN key cursor [MATCH pattern] [COUNT count], the type from argv[0]: a
// worker handler, sliced when COUNT is big (server/slicing/sliced_scan.h). As Redis, an absent
// key replies an empty scan (and a key of another type WRONGTYPE) before the options are read.
void CollectionScan(CommandContext& ctx, Args& argv, std::string* out);

}  // namespace rockcache::server
