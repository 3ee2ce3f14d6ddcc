// storage/replication_types — what the replication methods of storage::Store (store.h,
// "replication") take and return. Pure types; any thread.
//
// Offsets are RocksDB sequence numbers of the primary: a committed WriteBatch of n records holds
// the sequence numbers [first, first + n). A replica that applied every batch up to and including
// sequence S continues from S + 1.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "config/status.h"

namespace rockcache::storage {

// Reads the committed write batches of the primary's WAL in commit order, from a sequence number
// on. One thread at a time; blocking (reads WAL files). The WAL is kept for replication by
// Options::wal_ttl_seconds / wal_size_limit_mb; a reader positioned before what is still kept
// fails with NotFound ("purged").
class WalReader {
 public:
  virtual ~WalReader() = default;
  // The next batch: its RocksDB rep (the WriteBatch bytes: [seq fixed64][count fixed32][records])
  // in *rep, its first sequence number in *first_seq. Returns false when there is none yet
  // (caught up; call again later). NotFound when the WAL no longer holds the next batch.
  virtual StatusOr<bool> Next(uint64_t* first_seq, std::string* rep) = 0;
  // The sequence number the next batch starts at.
  virtual uint64_t next_sequence() const = 0;
};

// The keys a replicated batch touches, decoded from its records (storage/encoding.h), so the
// server can lock their stripes, drop their cache entries and tell their watchers.
struct ReplicatedKeys {
  // Meta records put or deleted: (physical database, user key).
  std::vector<std::pair<int, std::string>> metas;
  // User keys of collection entries put or deleted. Their database is not in the data key
  // (data column families are shared by every database): treat them as touched in every one.
  std::vector<std::string> entry_keys;
  // Physical databases whose metas a range deletion removed (FLUSHDB, FLUSHALL).
  std::vector<int> flushed_dbs;
  // A range deletion of collection entries (FLUSHALL) or a change of the logical -> physical
  // database mapping (SWAPDB): every key may have changed.
  bool all_keys = false;
  // Records the batch holds (puts, deletes, range deletions).
  uint64_t records = 0;
  // Server records (Store::PutServerRecord: FUNCTION libraries...) put or deleted: their names.
  std::vector<std::string> server_records;
  // The notes the primary's writer attached (Store::NoteForReplicas), in the order it added them.
  std::vector<std::string> notes;
};

// A primary's batch as a replica received it, decoded once (Store::DecodeReplicated): the keys
// it touches, for the server (locks, cache, watchers, events), and its records, which
// Store::ApplyReplicated writes. Applying spends the records; the keys stay.
class ReplicatedBatch {
 public:
  ReplicatedBatch();
  ~ReplicatedBatch();
  ReplicatedBatch(const ReplicatedBatch&) = delete;
  ReplicatedBatch& operator=(const ReplicatedBatch&) = delete;

  ReplicatedKeys keys;

  // The decoded records: storage's own (store_replication.cc).
  struct Records;
  std::unique_ptr<Records> records;
};

// Where a replica stands: the replication id of the history it follows (40 hex characters) and
// the last sequence number of that history it holds. Persisted with the data it describes.
struct ReplicationState {
  std::string replid;
  uint64_t offset = 0;
};

// Where a batch of a server's own WAL came from, for a server that serves replicas from its WAL
// (Store::ClassifyWalBatch): its replicas must receive the batches of the history they follow,
// numbered as that history numbers them.
enum class WalBatchOrigin : uint8_t {
  kOwn,         // written by this server's own commands (and internal writes)
  kReplicated,  // a primary's batch this server applied as a replica (Store::ApplyReplicated)
  kStateOnly,   // only a replication state (Store::SetReplicationState): nothing to ship
};

// A checkpoint of the database for a full synchronization: the directory holding it, its files
// (names relative to it) and the last sequence number it holds.
struct CheckpointFiles {
  std::string dir;
  std::vector<std::pair<std::string, uint64_t>> files;  // name, size in bytes
  uint64_t sequence = 0;
};

}  // namespace rockcache::storage
