// storage/batch_records writes and reads WriteBatch bytes directly: checked against the
// installed RocksDB's own WriteBatch, byte for byte, and by writing the bytes to a database.
#include "storage/batch_records.h"

#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "storage/records.h"
#include "tests/support/store_fixture.h"

using namespace rockcache::storage;

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace batch_records_test {

namespace {

struct Db {
  explicit Db(const std::string& path) {
    rocksdb::Options options;
    options.create_if_missing = true;
    options.create_missing_column_families = true;
    std::vector<rocksdb::ColumnFamilyDescriptor> cfs = {
        {rocksdb::kDefaultColumnFamilyName, rocksdb::ColumnFamilyOptions()},
        {"one", rocksdb::ColumnFamilyOptions()},
        {"two", rocksdb::ColumnFamilyOptions()}};
    rocksdb::DB* raw = nullptr;
    REQUIRE(rocksdb::DB::Open(options, path, cfs, &handles, &raw).ok());
    db.reset(raw);
  }
  ~Db() {
    for (auto* h : handles) (void)db->DestroyColumnFamilyHandle(h);
  }
  std::string Get(int cf, const std::string& key) {
    std::string value;
    rocksdb::Status s = db->Get(rocksdb::ReadOptions(), handles[cf], key, &value);
    return s.IsNotFound() ? "(none)" : value;
  }
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  std::unique_ptr<rocksdb::DB> db;
};

}  // namespace

TEST_CASE("batch records are the bytes RocksDB's WriteBatch writes", "[batch-records]") {
  testing::TempDir dir;
  Db db(dir.path());
  const std::string big(300, 'v');  // a length that takes two varint bytes
  rocksdb::WriteBatch theirs;
  REQUIRE(theirs.Put(db.handles[0], "k0", "v0").ok());
  REQUIRE(theirs.Put(db.handles[1], "k1", big).ok());
  REQUIRE(theirs.Delete(db.handles[2], "k2").ok());
  REQUIRE(theirs.Delete(db.handles[0], std::string("k\0x", 3)).ok());
  REQUIRE(theirs.Put(db.handles[2], "", "").ok());

  std::string ours = batch_records::EmptyRep();
  batch_records::AppendPut(&ours, 0, "k0", "v0");
  const size_t big_at = batch_records::AppendPut(&ours, db.handles[1]->GetID(), "k1", big);
  batch_records::AppendDelete(&ours, db.handles[2]->GetID(), "k2");
  batch_records::AppendDelete(&ours, 0, std::string_view("k\0x", 3));
  batch_records::AppendPut(&ours, db.handles[2]->GetID(), "", "");
  batch_records::SetCount(&ours, 5);
  CHECK(ours == theirs.Data());
  CHECK(ours.compare(big_at, big.size(), big) == 0);

  // Read back: every record, in order, with the column family ids RocksDB gave.
  std::vector<std::string> seen;
  CHECK(batch_records::ForEachRecord(theirs.Data(), [&](const batch_records::Record& r) {
    std::string line = std::to_string(r.cf_id) + (r.deleted ? " del " : " put ") +
                       theirs.Data().substr(r.key_offset, r.key_size);
    if (!r.deleted) line += "=" + theirs.Data().substr(r.value_offset, r.value_size);
    seen.push_back(line);
  }));
  const std::string one = std::to_string(db.handles[1]->GetID());
  const std::string two = std::to_string(db.handles[2]->GetID());
  CHECK(seen == std::vector<std::string>{"0 put k0=v0", one + " put k1=" + big, two + " del k2",
                                         std::string("0 del k\0x", 9), two + " put ="});

  // The bytes are a batch RocksDB writes as its own.
  REQUIRE(db.db->Put(rocksdb::WriteOptions(), db.handles[2], "k2", "old").ok());
  rocksdb::WriteBatch batch(ours);
  REQUIRE(batch.Count() == 5);
  REQUIRE(db.db->Write(rocksdb::WriteOptions(), &batch).ok());
  CHECK(db.Get(0, "k0") == "v0");
  CHECK(db.Get(1, "k1") == big);
  CHECK(db.Get(2, "k2") == "(none)");
  CHECK(db.Get(2, "") == "");
}

TEST_CASE("a Records is the bytes of the same writes in RocksDB's WriteBatch", "[batch-records]") {
  testing::TempDir dir;
  Db db(dir.path());
  const std::string big(200, 'b');
  rocksdb::WriteBatch theirs;
  REQUIRE(theirs.Put(db.handles[1], "k1", big).ok());
  REQUIRE(theirs.Put(db.handles[0], "k0", "head+tail").ok());
  REQUIRE(theirs.Delete(db.handles[2], "k2").ok());
  REQUIRE(theirs.DeleteRange(db.handles[2], "r0", "r9").ok());
  REQUIRE(theirs.DeleteRange(db.handles[0], "a", "b").ok());

  Records ours;
  CHECK(ours.Count() == 0);
  CHECK(ours.Data() == batch_records::EmptyRep());
  ours.Put(db.handles[1], "k1", big);
  ours.Put(db.handles[0], "k0", "head+", "tail");
  ours.Delete(db.handles[2], "k2");
  CHECK_FALSE(ours.HasDeleteRange());
  CHECK(batch_records::OnlyPointRecords(ours.Data()));
  ours.DeleteRange(db.handles[2], "r0", "r9");
  ours.DeleteRange(db.handles[0], "a", "b");
  CHECK(ours.HasDeleteRange());
  CHECK(ours.Count() == 5);
  CHECK(ours.Data() == theirs.Data());  // the header's count included

  // Written as RocksDB's own batch: the range deletions apply.
  REQUIRE(db.db->Put(rocksdb::WriteOptions(), db.handles[2], "r5", "gone").ok());
  REQUIRE(db.db->Put(rocksdb::WriteOptions(), db.handles[2], "s", "kept").ok());
  rocksdb::WriteBatch batch = ours.TakeBatch();
  CHECK(batch.Count() == 5);
  CHECK(batch.HasDeleteRange());
  REQUIRE(db.db->Write(rocksdb::WriteOptions(), &batch).ok());
  CHECK(db.Get(1, "k1") == big);
  CHECK(db.Get(0, "k0") == "head+tail");
  CHECK(db.Get(2, "r5") == "(none)");
  CHECK(db.Get(2, "s") == "kept");
  // Taken: the Records is empty again, and usable.
  CHECK(ours.Count() == 0);
  CHECK_FALSE(ours.HasDeleteRange());
  CHECK(ours.Data() == batch_records::EmptyRep());
  ours.Delete(db.handles[1], "k1");
  CHECK(ours.Count() == 1);
}

TEST_CASE("a Records writes a collection entry's key in place, as DataKey builds it",
          "[batch-records]") {
  testing::TempDir dir;
  Db db(dir.path());
  const std::string long_key(300, 'k');  // past DataKeyBytes::kInline
  for (const std::string& key : {std::string("h"), std::string(), long_key}) {
    const uint64_t version = 0x0102030405060708ULL;
    Records in_place;
    in_place.PutEntry(db.handles[1], key, version, "field", "value");
    in_place.DeleteEntry(db.handles[2], key, version, std::string("m\0", 2));
    Records built;
    built.Put(db.handles[1], DataKey(key, version, "field"), "value");
    built.Delete(db.handles[2], DataKey(key, version, std::string("m\0", 2)));
    CHECK(in_place.Data() == built.Data());
    CHECK(in_place.Count() == 2);

    const DataKeyBytes bytes(key, version, "sub");
    CHECK(bytes.view() == DataKey(key, version, "sub"));
    CHECK(bytes.size() == DataKeySize(key, "sub"));
  }
}

TEST_CASE("a thread's Records reuse one buffer, up to its bound", "[batch-records]") {
  testing::TempDir dir;
  Db db(dir.path());
  const char* first_bytes = nullptr;
  {
    Records a;
    a.Put(db.handles[1], "key", std::string(1000, 'x'));
    first_bytes = a.Data().data();
  }
  {
    Records b;  // the buffer a gave back: no allocation for the same size again
    b.Put(db.handles[1], "key", std::string(1000, 'y'));
    CHECK(b.Data().data() == first_bytes);
    CHECK(b.Count() == 1);
    Records c;  // b holds the spare: c has its own
    CHECK(c.Data().data() != first_bytes);
    CHECK(c.Data() == batch_records::EmptyRep());
  }
  {
    Records huge;  // beyond the bound it is freed, not kept
    huge.Put(db.handles[1], "key", std::string(Records::kMaxSpareBytes + 1, 'z'));
  }
  Records after;
  after.Put(db.handles[1], "key", std::string(1000, 'y'));
  CHECK(after.Data().size() < 1100);
}

TEST_CASE("batch records refuse what they cannot read", "[batch-records]") {
  testing::TempDir dir;
  Db db(dir.path());
  rocksdb::WriteBatch single;
  REQUIRE(single.SingleDelete(db.handles[1], "s").ok());
  int deletes = 0;
  CHECK(batch_records::ForEachRecord(
      single.Data(), [&](const batch_records::Record& r) { deletes += r.deleted; }));
  CHECK(deletes == 1);

  rocksdb::WriteBatch range;
  REQUIRE(range.Put(db.handles[1], "a", "1").ok());
  REQUIRE(range.DeleteRange(db.handles[1], "a", "b").ok());
  CHECK_FALSE(batch_records::OnlyPointRecords(range.Data()));
  rocksdb::WriteBatch merge;
  REQUIRE(merge.Merge(db.handles[0], "m", "1").ok());
  CHECK_FALSE(batch_records::OnlyPointRecords(merge.Data()));

  std::string truncated = batch_records::EmptyRep();
  batch_records::AppendPut(&truncated, 0, "key", "value");
  truncated.pop_back();
  CHECK_FALSE(batch_records::OnlyPointRecords(truncated));
  CHECK_FALSE(batch_records::OnlyPointRecords("short"));
  CHECK(batch_records::OnlyPointRecords(batch_records::EmptyRep()));
}

TEST_CASE("SortedByKey orders records by column family and key, a key's writes in order",
          "[batch-records]") {
  testing::TempDir dir;
  Db db(dir.path());
  const uint32_t one = db.handles[1]->GetID();
  rocksdb::WriteBatch batch;
  REQUIRE(batch.Put(db.handles[1], "b", "1").ok());
  REQUIRE(batch.Put(db.handles[0], "z", "2").ok());
  REQUIRE(batch.Put(db.handles[1], "a", "3").ok());
  REQUIRE(batch.Delete(db.handles[1], "b").ok());  // b: put, delete, put: the last put wins
  REQUIRE(batch.Put(db.handles[0], "y", "4").ok());
  REQUIRE(batch.Put(db.handles[1], "b", "5").ok());
  std::string sorted;
  REQUIRE(batch_records::SortedByKey(batch.Data(), &sorted));
  CHECK(sorted.substr(0, batch_records::kHeaderSize) ==
        batch.Data().substr(0, batch_records::kHeaderSize));  // sequence and count as they were
  std::vector<std::string> order;
  REQUIRE(batch_records::ForEachRecord(sorted, [&](const batch_records::Record& r) {
    std::string what = std::to_string(r.cf_id == one ? 1 : r.cf_id) + ":" +
                       sorted.substr(r.key_offset, r.key_size) + "=";
    what += r.deleted ? "del" : sorted.substr(r.value_offset, r.value_size);
    order.push_back(what);
  }));
  CHECK(order == std::vector<std::string>{"0:y=4", "0:z=2", "1:a=3", "1:b=1", "1:b=del", "1:b=5"});
  // Written, the sorted batch leaves what the batch as it was leaves.
  rocksdb::WriteBatch reordered(sorted);
  REQUIRE(db.db->Write(rocksdb::WriteOptions(), &reordered).ok());
  CHECK(db.Get(1, "b") == "5");
  CHECK(db.Get(1, "a") == "3");
  CHECK(db.Get(0, "y") == "4");
  CHECK(db.Get(0, "z") == "2");
  // Nothing to do: already in order, or a range deletion (not a point record).
  std::string out;
  CHECK_FALSE(batch_records::SortedByKey(sorted, &out));
  rocksdb::WriteBatch ranged;
  REQUIRE(ranged.Put(db.handles[0], "b", "1").ok());
  REQUIRE(ranged.DeleteRange(db.handles[0], "c", "d").ok());
  REQUIRE(ranged.Put(db.handles[0], "a", "1").ok());
  CHECK_FALSE(batch_records::SortedByKey(ranged.Data(), &out));
}

}  // namespace batch_records_test
