// Sliced scans: SCAN / HSCAN / SSCAN / ZSCAN with a COUNT bigger than one step's worth
// (`slice-items`) run as sliced commands (server/slicing/sliced_read.h) instead of holding a
// worker for the whole COUNT.
//
// How. The store's cursors compose (storage/store.h above Store::Scan): a call with count a
// followed by a call with count b from its cursor examines what one call with count a + b would,
// with the same guarantees (a key present throughout is returned at least once; duplicates only
// when a resume-table entry was recycled meanwhile, which Redis allows too). So a big COUNT is
// walked as a chain of store calls of at most kExaminedPerCall entries each, `slice-items`
// entries (or `slice-usec`) per step, each resuming at the previous call's cursor, until COUNT
// entries were examined or the cursor came back to 0.
//
// The reply is [next cursor, [items...]]: the cursor comes first and is known only at the end,
// so the items are kept in the SlicedScan and the whole reply is written by the last step;
// earlier steps append nothing (SliceTask posts no empty chunk). A scan that finishes in its
// first step replies from the handler like any small command.
//
// Unlike a range read, the steps do not read one snapshot: each store call reads the current
// state, as separate SCAN calls do. Between steps nothing is locked (a collection scan holds its
// key lock in the first step only) and the cache is not touched. Each step sets the physical
// database the command started in (DbScope), which stays the command's even if a SWAPDB remaps
// its number meanwhile. A collection deleted meanwhile ends the scan (cursor 0); one replaced by
// another type replies WRONGTYPE (nothing of the reply was sent yet).
//
// Output limit. The items kept are bounded by the client's reply room at the command's start
// (ReplyRoom, storage's ResultBytes rule: each item's bytes plus kResultItemOverhead): past it
// the command stops with Status::OverLimit and the client is closed as over its output limit, as
// the unsliced SCAN is.
//
// A COUNT that fits in one step, or a caller that cannot continue (no ctx.slices: inside EXEC),
// takes the one-call path: one store call with the whole COUNT, as before slicing.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>

#include "server/commands/command.h"
#include "server/slicing/sliced_read.h"
#include "storage/store.h"

namespace rockcache::server {

// Which SCAN-family command.
enum class ScanTarget {
  kKeys,  // SCAN: keys of the current database
  kHash,  // HSCAN: field/value pairs of `key`
  kSet,   // SSCAN: members of `key`
  kZSet,  // ZSCAN: member/score pairs of `key`
};

// A parsed SCAN-family call. The views must outlive ReplyScan only (a continuation copies them).
struct ScanRequest {
  ScanTarget target = ScanTarget::kKeys;
  std::string_view key;  // the collection (not SCAN)
  uint64_t cursor = 0;
  // As the store takes it: empty matches everything. For a collection (HSCAN/SSCAN/ZSCAN), empty
  // is MATCH "": only the field/member "" is replied (the handlers pass "*" for no MATCH).
  std::string_view pattern;
  uint64_t count = 10;                   // entries to examine (COUNT), >= 1
  std::optional<storage::KeyType> type;  // SCAN ... TYPE; nullopt = every type
};

// Worker, in a handler holding the command's key locks: replies `request` as
// [next cursor, [items...]], sliced as described at the top. A store error (WRONGTYPE) is the
// reply instead. Returns true when this call appended the whole reply (items or error); false
// when the rest was deferred to ctx.slices (nothing appended yet), or when the items passed the
// reply budget (ctx.reply_budget is then marked exceeded and nothing is appended).
bool ReplyScan(CommandContext& ctx, const ScanRequest& request, std::string* out);

// The sliced form of `request` over `store` in physical database `db`, keeping at most
// `max_bytes` of items (ResultBytes's rule): what ReplyScan defers. Its steps run with the
// thread's database set to `db`. Exposed for tests.
std::unique_ptr<SlicedRead> NewSlicedScan(storage::Store* store, int db, const ScanRequest& request,
                                          uint64_t max_bytes);

}  // namespace rockcache::server
