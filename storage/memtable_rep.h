// storage/memtable_rep — rockcache's memtable representation for RocksDB: a skip list.
//
// Why: RocksDB keeps each column family's recent writes in a memtable, an ordered structure
// behind its MemTableRep interface (rocksdb/memtablerep.h); the default is its own skip list.
// Debian's librocksdb is built with its assertions on, and that skip list checks the order of the
// nodes around every step of a search: three key comparisons a step instead of one, each two
// virtual calls deep, the largest part of a spread SET's cost and of a pop's tombstone insert.
// This is the same structure compiled with our flags, comparing keys inline for the bytewise
// order every rockcache column family uses (`rocksdb-memtable`, config/config.cc, chooses it;
// `rocksdb` is RocksDB's).
//
// Contract (RocksDB's SkipListRep's, without concurrent inserts):
// - One writer at a time: the DB must run with DBOptions::allow_concurrent_memtable_write =
//   false (RocksDB refuses to open otherwise: the factory says inserts are not concurrent). Any
//   number of readers and iterators run beside the writer without locks: a node is written
//   whole before a release store links it, and readers follow links with acquire loads.
// - Entries are never removed; their memory goes with the memtable. The first ~1 MB of nodes
//   (entries included) come from the memtable's arena; with `huge_pages`, the rest come from 2 MB
//   chunks of the list's own (storage/huge_page_chunks.h), counted in ApproximateMemoryUsage so
//   RocksDB's flush trigger sees them, and unmapped when the memtable is destroyed.
// - An entry is RocksDB's memtable record: varint32 length, internal key (user key, then the
//   8-byte sequence/type trailer), value. Order: user keys bytewise ascending, then sequence
//   numbers descending, the value type ignored (MemTable::KeyComparator). Inserting an entry
//   equal to one present is refused (InsertKey returns false), as RocksDB's skip list does.
// - Insert hints (memtable_insert_with_hint_prefix_extractor, storage/rocks_options.cc): a hint is
//   the search path of the last insert with the same prefix, so a run of inserts into one
//   collection starts where the previous one ended; inserts without a hint share one path.
// - Read paths: a point read (Get) keeps its search path, per thread, for the next insert of the
//   same user key on that thread, which starts there (the meta read before a write, INCR): the
//   new version sorts right before the versions the read found. Checked level by level like a
//   hint; a path of another thread, list or key is not used.
// - Relies on two things of librocksdb outside its public headers: the symbol
//   rocksdb::Arena::AllocateAligned (memtable iterators live in the reading iterator's arena, as
//   RocksDB's own memtables' do; the build fails to link if a librocksdb lacks it), and the
//   layout of rocksdb::LookupKey, whose first member points at the memtable key a point read
//   looks for (MemTableKeyOf; the unit test builds a LookupKey with librocksdb's constructor
//   and checks it).
#pragma once

#include <cstdint>
#include <memory>

namespace rocksdb {
class LookupKey;
class MemTableRepFactory;
}  // namespace rocksdb

namespace rockcache::storage {

// The factory for column families whose comparator is the default (bytewise) one. With
// `bytewise_keys` false, keys are compared by RocksDB's comparator (any order), at its cost.
// `huge_pages`: nodes past a memtable's first ~1 MB come from 2 MB transparent huge pages
// (rocksdb-memtable-huge-pages). `prefix_skip` (bytewise keys only): a search compares a key
// from the leading bytes it knows the key shares with both nodes around the range it walks,
// for families whose keys share long prefixes (a collection's entries). It pays for its
// bookkeeping only there (scripts/memtable-misses.sh measures both), so it is per factory
// (rocks_options.cc: the data families only).
std::shared_ptr<rocksdb::MemTableRepFactory> NewSkipListMemTableFactory(bool bytewise_keys = true,
                                                                        bool huge_pages = true,
                                                                        bool prefix_skip = false);

// The memtable key (varint32 length, then the internal key) of a point read's LookupKey.
const char* MemTableKeyOf(const rocksdb::LookupKey& key);

// Tests: while on, every key comparison of a bytewise memtable is also made by RocksDB's
// comparator, and a disagreement aborts the process.
void SetMemTableComparisonCheck(bool on);

// Tests: the key comparisons the lists made on this thread, and this thread's inserts that started
// from the search path of its own point read of the same user key (a read-modify-write).
uint64_t MemTableComparisonsOnThisThread();
uint64_t MemTableInsertsFromReadPathOnThisThread();

}  // namespace rockcache::storage
