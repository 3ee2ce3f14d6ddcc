// storage/counts_note — the key-counter changes of a write group's batch, shipped inside the
// batch to replicas (internal to storage/).
//
// Why: each database's counters (RocksStore::DbCounters: keys, keys with a TTL, the sum of their
// expire-at times) move by what a batch's records did to the keys' metas. The primary knows
// that exactly when it builds the batch (the Store methods note it: AddKeyCount, NoteTtlChange);
// a replica applying the batch had to learn it again by reading every meta the batch writes
// before applying it (a RocksDB Get per key that may exist: a third of a replica's CPU under
// spread SETs of existing keys, perf). So the write group (write_group.cc: Flush, CommitAtomic)
// appends its changes to every batch it writes as a RocksDB LogData record (not applied to the
// database; replicas see it in the WAL), and a replica (store_replication.cc: ApplyReplicated)
// applies them instead of reading. A batch without one (written outside a write group, or by an
// older primary) is counted by reading, as before.
//
// A note says how many records it counts, those right before it (its writer's batch): RocksDB
// joins the batches of writers that queue at the same time into one WAL record, so a record a
// replica reads may hold a group's batch beside another writer's (with or without a note), and a
// replica joins the batches that reached it together (Store::DecodeReplicated). A record no note
// covers is counted from its meta's state before it (store_replication.cc, ApplyReplicated).
//
// Bytes: kMagic, the writer's ttl_base_ms (the origin its expire_sum counts from, see
// RocksStore::DbCounters), the records the note counts (u32), then one entry per physical
// database the batch changed: db (u32), keys (i64), expires (i64), expire_sum (u64); fixed width,
// little endian. A batch that changes no counter still carries the note (just the header): that,
// too, spares the replica its reads. Notes of the first format ("rccn1", without the record
// count) are recognized and not decoded.
//
// Pure functions; any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "storage/rocks_store.h"

namespace rockcache::storage::counts_note {

inline constexpr std::string_view kMagic = "rccn2";
// What every format's magic starts with.
inline constexpr std::string_view kMagicFamily = "rccn";

// The note for `n` changes of a batch of `records` records, counted from `ttl_base_ms`.
std::string Encode(int64_t ttl_base_ms, uint32_t records, const RocksStore::CounterDelta* deltas,
                   size_t n, const std::vector<RocksStore::CounterDelta>& more);

// Whether `blob` is a counts note of any format (never another kind of note).
inline bool Is(std::string_view blob) {
  return blob.substr(0, kMagicFamily.size()) == kMagicFamily;
}

// Decodes a note into changes counted from `ttl_base_ms` (the reader's origin: expire_sum moves
// by expires x (writer's base - reader's base)) and the records it counts. False for a malformed
// note or another format (*out then holds nothing): the caller counts by reading.
bool Decode(std::string_view blob, int64_t ttl_base_ms, std::vector<RocksStore::CounterDelta>* out,
            uint32_t* records);

}  // namespace rockcache::storage::counts_note
