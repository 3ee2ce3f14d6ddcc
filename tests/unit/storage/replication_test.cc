// Storage's replication methods (store.h "replication"): a replica store that applies the
// primary's WAL batches reads what the primary reads, with the same key counts, after a
// checkpoint swap too; the WAL reader reports a purged position.
#include <stdlib.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "config/current_db.h"
#include "storage/perf_counters.h"
#include "storage/store.h"

using namespace rockcache;
using namespace rockcache::storage;

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace replication_test {

namespace {

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/rockcache-repl-test-XXXXXX";
    char* p = mkdtemp(tmpl);
    REQUIRE(p != nullptr);
    path_ = p;
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::unique_ptr<Store> OpenAt(const std::string& dir) {
  Options o;
  o.dir = dir;
  o.write_buffer_bytes = 4 << 20;
  o.block_cache_bytes = 8 << 20;
  auto s = Store::Open(o);
  REQUIRE(s.ok());
  return std::move(s).value();
}

// Applies every batch of `primary` from `*next` on to `replica`; returns how many.
int Ship(Store& primary, Store& replica, uint64_t* next) {
  auto reader = primary.ReadWalFrom(*next);
  REQUIRE(reader.ok());
  int batches = 0;
  uint64_t first = 0;
  std::string rep;
  while (true) {
    auto got = (*reader)->Next(&first, &rep);
    REQUIRE(got.ok());
    if (!*got) break;
    REQUIRE(first == *next);
    ReplicatedBatch batch;
    REQUIRE(replica.DecodeReplicated(rep, &batch).ok());
    CHECK(batch.keys.records > 0);
    *next = (*reader)->next_sequence();
    REQUIRE(replica.ApplyReplicated(&batch, {"replid", *next - 1}).ok());
    ++batches;
  }
  return batches;
}

}  // namespace

TEST_CASE("a replica store applying the WAL reads as the primary", "[storage][replication]") {
  TempDir pdir, rdir;
  auto primary = OpenAt(pdir.path());
  auto replica = OpenAt(rdir.path());
  uint64_t next = primary->LatestSequence() + 1;

  REQUIRE(primary->Set("s", "v", SetOptions()).ok());
  REQUIRE(primary->HSet("h", {{"f1", "a"}, {"f2", "b"}}, nullptr).ok());
  REQUIRE(primary->RPush("l", {"x", "y"}).ok());
  REQUIRE(primary->SAdd("set", {"m"}, nullptr).ok());
  REQUIRE(primary->ExpireAt("s", 4102444800000, ExpireCondition::kAlways).ok());
  {
    DbScope scope(primary->PhysicalDb(2));
    REQUIRE(primary->Set("in-db2", "two", SetOptions()).ok());
  }
  CHECK(Ship(*primary, *replica, &next) > 0);

  CHECK(*replica->Get("s") == std::optional<std::string>("v"));
  // Collections created after the replica opened: their entries must pass its entry filter.
  CHECK(*replica->HGet("h", "f2") == std::optional<std::string>("b"));
  CHECK(*replica->SIsMember("set", "m"));
  CHECK(*replica->LLen("l") == 2);
  CHECK(*replica->DbSize() == 4);
  CHECK(replica->GetKeyStats().expires == 1);
  {
    DbScope scope(replica->PhysicalDb(2));
    CHECK(*replica->DbSize() == 1);
  }
  auto state = replica->GetReplicationState();
  REQUIRE(state.ok());
  CHECK(state->replid == "replid");
  CHECK(state->offset == next - 1);

  // Deletes, a FLUSHDB and a SWAPDB follow too.
  REQUIRE(primary->Del({"l"}).ok());
  REQUIRE(primary->HDel("h", {"f1"}).ok());
  {
    DbScope scope(primary->PhysicalDb(2));
    REQUIRE(primary->FlushDb().ok());
  }
  REQUIRE(primary->SwapDb(0, 1).ok());
  Ship(*primary, *replica, &next);
  CHECK(replica->PhysicalDb(0) == primary->PhysicalDb(0));
  {
    DbScope scope(replica->PhysicalDb(1));
    CHECK(*replica->DbSize() == 3);
    CHECK(!replica->HGet("h", "f1")->has_value());
  }
  {
    DbScope scope(replica->PhysicalDb(2));
    CHECK(*replica->DbSize() == 0);
  }
}

TEST_CASE("a replica store takes a write group's key counts from its batch, reading no meta",
          "[storage][replication]") {
  TempDir pdir, rdir;
  auto primary = OpenAt(pdir.path());
  // Opened later: its expire-at sums count from another origin (counts_note.h converts).
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  auto replica = OpenAt(rdir.path());
  uint64_t next = primary->LatestSequence() + 1;
  const int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  auto with_ttl = [](int64_t at_ms) {
    SetOptions o;
    o.expiry.mode = Expiry::Mode::kAt;
    o.expiry.at_ms = at_ms;
    return o;
  };
  // Each shipped batch's apply on the replica: how many memtable lookups it made.
  auto ship_counting_reads = [&]() {
    PerfScope perf;
    REQUIRE(Ship(*primary, *replica, &next) > 0);
    return perf.Read().get_from_memtable;
  };
  auto same_counts = [&]() {
    for (int db : {0, 2}) {
      DbScope p(primary->PhysicalDb(db));
      const KeyStats ps = primary->GetKeyStats();
      DbScope r(replica->PhysicalDb(db));
      const KeyStats rs = replica->GetKeyStats();
      CHECK(rs.keys == ps.keys);
      CHECK(rs.expires == ps.expires);
      CHECK(std::abs(rs.avg_ttl_ms - ps.avg_ttl_ms) < 100);
      CHECK(*replica->DbSize() == *primary->DbSize());
    }
  };

  {
    auto group = primary->OpenWriteGroup();
    for (const char* key : {"a", "b", "c", "d", "e"}) {
      REQUIRE(primary->Set(key, "v", SetOptions()).ok());
    }
    REQUIRE(primary->Set("t1", "v", with_ttl(now + 10000)).ok());
    REQUIRE(primary->Set("t2", "v", with_ttl(now + 20000)).ok());
    REQUIRE(group->Commit().ok());
  }
  CHECK(ship_counting_reads() == 0);
  same_counts();

  // Overwrites, a TTL cleared, set and changed, deletes, another database: all counted from the
  // primary's note, none read.
  {
    auto group = primary->OpenWriteGroup();
    REQUIRE(primary->Set("a", "w", SetOptions()).ok());
    REQUIRE(primary->Set("t1", "w", SetOptions()).ok());
    REQUIRE(primary->ExpireAt("b", now + 30000, ExpireCondition::kAlways).ok());
    REQUIRE(primary->ExpireAt("t2", now + 40000, ExpireCondition::kAlways).ok());
    REQUIRE(primary->Del({"c", "nothing"}).ok());
    {
      DbScope scope(primary->PhysicalDb(2));
      REQUIRE(primary->Set("x", "v", with_ttl(now + 50000)).ok());
    }
    REQUIRE(group->Commit().ok());
  }
  CHECK(ship_counting_reads() == 0);
  same_counts();
  {
    DbScope scope(replica->PhysicalDb(0));
    CHECK(*replica->DbSize() == 6);
    CHECK(replica->GetKeyStats().expires == 2);
  }

  // A write outside a write group carries no note: the replica reads the overwritten key's meta.
  REQUIRE(primary->Set("d", "w", with_ttl(now + 60000)).ok());
  CHECK(ship_counting_reads() > 0);
  same_counts();
}

// A replica joins the batches that reached it together into one write (Store::DecodeReplicated
// of several): the same data and key counts as applying them one by one, the counts taken from the
// primary's notes only when they count every record joined, and the replica's WAL holding the
// joined batch as a chained replica must receive it (the first batch's sequence, all records).
TEST_CASE("a replica store applies consecutive batches joined into one write",
          "[storage][replication]") {
  TempDir pdir, rdir, cdir;
  auto primary = OpenAt(pdir.path());
  auto replica = OpenAt(rdir.path());
  auto chained = OpenAt(cdir.path());
  REQUIRE(replica->SetReplicationState({"replid", primary->LatestSequence()}).ok());
  const uint64_t replica_from = replica->LatestSequence() + 1;
  uint64_t next = primary->LatestSequence() + 1;
  const int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  SetOptions with_ttl;
  with_ttl.expiry.mode = Expiry::Mode::kAt;
  with_ttl.expiry.at_ms = now + 60000;

  // The primary's batches from `next` on, as a sender reads them.
  auto batches = [&]() {
    std::vector<std::string> out;
    auto reader = primary->ReadWalFrom(next);
    REQUIRE(reader.ok());
    uint64_t first = 0;
    std::string rep;
    while (*(*reader)->Next(&first, &rep)) {
      REQUIRE(first == next);
      next = (*reader)->next_sequence();
      out.push_back(rep);
    }
    return out;
  };
  // Applies them as one; returns the memtable lookups applying made (metas read to count).
  auto apply_joined = [&](const std::vector<std::string>& reps) {
    const std::vector<std::string_view> views(reps.begin(), reps.end());
    ReplicatedBatch batch;
    REQUIRE(replica->DecodeReplicated(views, &batch).ok());
    PerfScope perf;
    REQUIRE(replica->ApplyReplicated(&batch, {"replid", next - 1}).ok());
    return perf.Read().get_from_memtable;
  };
  auto same_counts = [&]() {
    const KeyStats ps = primary->GetKeyStats();
    const KeyStats rs = replica->GetKeyStats();
    CHECK(rs.keys == ps.keys);
    CHECK(rs.expires == ps.expires);
    CHECK(*replica->DbSize() == *primary->DbSize());
  };
  auto group_set = [&](std::initializer_list<const char*> keys, const SetOptions& o) {
    auto group = primary->OpenWriteGroup();
    for (const char* key : keys) REQUIRE(primary->Set(key, "v", o).ok());
    REQUIRE(group->Commit().ok());
  };

  group_set({"a", "b", "c"}, SetOptions());
  group_set({"b", "d"}, with_ttl);
  {
    auto group = primary->OpenWriteGroup();
    REQUIRE(primary->Del({"a"}).ok());
    REQUIRE(group->Commit().ok());
  }
  // Write groups only (and the first write's reservation of versions, a props record outside
  // any group): every meta counted by a note, none read.
  std::vector<std::string> sent = batches();
  REQUIRE(sent.size() == 4);
  CHECK(apply_joined(sent) == 0);
  same_counts();
  CHECK(replica->GetKeyStats().keys == 3);
  CHECK(replica->GetKeyStats().expires == 2);

  // A group's batch joined with writes outside a group (no note) on the same keys: the group's
  // records counted by its note, the others from the state before each (read, or left by a
  // record before it). Counted from the one note alone, there would be a key too many and e's
  // TTL missing; counted from metas read before the write, e would count twice; a note taken to
  // count every record before it would count g's batch too.
  REQUIRE(primary->Set("g", "v", SetOptions()).ok());
  group_set({"e", "f"}, SetOptions());
  REQUIRE(primary->Set("e", "w", with_ttl).ok());
  REQUIRE(primary->Del({"b", "f"}).ok());
  REQUIRE(primary->Set("b", "again", SetOptions()).ok());
  std::vector<std::string> mixed = batches();
  REQUIRE(mixed.size() == 5);
  CHECK(apply_joined(mixed) > 0);
  same_counts();
  CHECK(*replica->Get("e") == std::optional<std::string>("w"));
  CHECK(*replica->Get("b") == std::optional<std::string>("again"));
  CHECK(*replica->Get("f") == std::nullopt);
  sent.insert(sent.end(), mixed.begin(), mixed.end());

  // The replica's WAL: one batch per joined write, given back as the primary's batches joined
  // (the first one's header sequence, the count of all), which a chained replica applies.
  auto reader = replica->ReadWalFrom(replica_from);
  REQUIRE(reader.ok());
  uint64_t local = 0;
  std::string rep;
  std::vector<std::string> given;
  while (*(*reader)->Next(&local, &rep)) {
    ReplicationState state;
    REQUIRE(replica->ClassifyWalBatch(&rep, &state) == WalBatchOrigin::kReplicated);
    given.push_back(rep);
  }
  REQUIRE(given.size() == 2);
  auto joined = [](const std::vector<std::string>& reps, size_t from, size_t to) {
    std::string out = reps[from];
    uint32_t count = 0;
    for (size_t i = from; i < to; ++i) {
      uint32_t n = 0;
      std::memcpy(&n, reps[i].data() + 8, 4);
      count += n;
      if (i > from) out.append(reps[i], 12, std::string::npos);
    }
    std::memcpy(&out[8], &count, 4);
    return out;
  };
  CHECK(given[0] == joined(sent, 0, 4));
  CHECK(given[1] == joined(sent, 4, 9));
  // A replica of this one that joined differently stands between two of the primary's batches:
  // it gets the rest of the joined one, the notes of the batches before it dropped.
  for (size_t from = 5; from < 9; ++from) {
    uint64_t seq = 0;
    std::memcpy(&seq, sent[from].data(), 8);
    std::string rest = given[1];
    REQUIRE(replica->DropRecordsBefore(&rest, seq).ok());
    CHECK(rest == joined(sent, from, 9));
  }
  {
    uint64_t seq = 0;
    std::memcpy(&seq, given[1].data(), 8);
    std::string rest = given[1];
    CHECK(replica->DropRecordsBefore(&rest, seq).IsInvalidArgument());
    CHECK(replica->DropRecordsBefore(&rest, next).IsInvalidArgument());
    CHECK(rest == given[1]);
  }
  for (const std::string& batch_rep : given) {
    ReplicatedBatch batch;
    REQUIRE(chained->DecodeReplicated(batch_rep, &batch).ok());
    REQUIRE(chained->ApplyReplicated(&batch, {"replid", next - 1}).ok());
  }
  CHECK(chained->GetKeyStats().keys == primary->GetKeyStats().keys);
  CHECK(chained->GetKeyStats().expires == primary->GetKeyStats().expires);
  CHECK(*chained->Get("e") == std::optional<std::string>("w"));
  CHECK(*chained->Get("c") == std::optional<std::string>("v"));
}

TEST_CASE("a replica store swaps in a checkpoint of the primary", "[storage][replication]") {
  TempDir pdir, rdir, cdir;
  auto primary = OpenAt(pdir.path());
  auto replica = OpenAt(rdir.path());
  REQUIRE(replica->Set("old", "gone", SetOptions()).ok());
  for (int i = 0; i < 100; ++i) {
    REQUIRE(primary->Set("k" + std::to_string(i), std::to_string(i), SetOptions()).ok());
  }
  REQUIRE(primary->HSet("h", {{"f", "v"}}, nullptr).ok());
  const std::string checkpoint = cdir.path() + "/cp";
  auto files = primary->CreateCheckpoint(checkpoint);
  REQUIRE(files.ok());
  CHECK(!files->files.empty());
  const std::string replid(40, 'a');
  REQUIRE(replica->ReplaceDatabase(checkpoint, {replid, 12345}).ok());
  CHECK(!std::filesystem::exists(checkpoint));
  // The state went in with the data; the old database is gone.
  CHECK(replica->GetReplicationState()->replid == replid);
  CHECK(replica->GetReplicationState()->offset == 12345);
  CHECK(!std::filesystem::exists(rdir.path() + "/replaced"));
  CHECK(!std::filesystem::exists(rdir.path() + "/discarded"));
  CHECK(*replica->DbSize() == 101);
  CHECK(!replica->Get("old")->has_value());
  CHECK(*replica->HGet("h", "f") == std::optional<std::string>("v"));
  // The checkpoint's last sequence, and one more: the replication state written with it.
  CHECK(replica->LatestSequence() == primary->LatestSequence() + 1);
  // Writes after the checkpoint follow from the primary's position at the checkpoint.
  uint64_t next = primary->LatestSequence() + 1;
  REQUIRE(primary->Set("after", "1", SetOptions()).ok());
  Ship(*primary, *replica, &next);
  CHECK(*replica->Get("after") == std::optional<std::string>("1"));
  // Promoted, it writes new collections without reusing the primary's versions.
  REQUIRE(replica->ResumeWrites().ok());
  REQUIRE(replica->HSet("h2", {{"f", "w"}}, nullptr).ok());
  CHECK(*replica->HGet("h", "f") == std::optional<std::string>("v"));
  CHECK(*replica->HGet("h2", "f") == std::optional<std::string>("w"));
}

TEST_CASE("the WAL reader refuses a position before what is kept", "[storage][replication]") {
  TempDir dir;
  auto store = OpenAt(dir.path());
  CHECK(store->ReadWalFrom(store->LatestSequence() + 1).ok());  // nothing yet: fine
  REQUIRE(store->Set("a", "1", SetOptions()).ok());
  CHECK(store->ReadWalFrom(1).ok());
  CHECK(store->ReadWalFrom(store->LatestSequence()).ok());
}

TEST_CASE("a replica's WAL gives back the primary's batches byte for byte",
          "[storage][replication]") {
  TempDir pdir, rdir;
  auto primary = OpenAt(pdir.path());
  auto replica = OpenAt(rdir.path());
  REQUIRE(replica->SetReplicationState({"replid", primary->LatestSequence()}).ok());
  const uint64_t replica_from = replica->LatestSequence() + 1;
  uint64_t next = primary->LatestSequence() + 1;
  REQUIRE(primary->Set("s", "v", SetOptions()).ok());
  REQUIRE(primary->HSet("h", {{"f1", "a"}, {"f2", "b"}}, nullptr).ok());
  REQUIRE(primary->RPush("l", {"x", "y", "z"}).ok());
  REQUIRE(primary->Del({"s"}).ok());

  // The primary's batches, and the replica applying them (where its WAL put each).
  std::vector<std::pair<uint64_t, std::string>> sent;
  std::vector<uint64_t> locals;
  {
    auto reader = primary->ReadWalFrom(next);
    REQUIRE(reader.ok());
    uint64_t first = 0;
    std::string rep;
    while (true) {
      auto got = (*reader)->Next(&first, &rep);
      REQUIRE(got.ok());
      if (!*got) break;
      next = (*reader)->next_sequence();
      uint64_t local = 0;
      ReplicatedBatch batch;
      REQUIRE(replica->DecodeReplicated(rep, &batch).ok());
      REQUIRE(replica->ApplyReplicated(&batch, {"replid", next - 1}, &local).ok());
      CHECK(local == replica->LatestSequence() - (next - first));  // the batch and its state
      sent.emplace_back(first, rep);
      locals.push_back(local);
    }
  }
  REQUIRE(sent.size() >= 4);

  auto reader = replica->ReadWalFrom(replica_from);
  REQUIRE(reader.ok());
  uint64_t local = 0;
  std::string rep;
  size_t i = 0;
  while (true) {
    auto got = (*reader)->Next(&local, &rep);
    REQUIRE(got.ok());
    if (!*got) break;
    ReplicationState state;
    const WalBatchOrigin origin = replica->ClassifyWalBatch(&rep, &state);
    REQUIRE(origin == WalBatchOrigin::kReplicated);
    REQUIRE(i < sent.size());
    CHECK(local == locals[i]);
    CHECK(state.replid == "replid");
    CHECK(rep == sent[i].second);  // header (the primary's sequence and count) included
    ++i;
  }
  CHECK(i == sent.size());

  // A state alone, and the replica's own write, are told apart.
  REQUIRE(replica->SetReplicationState({}).ok());
  REQUIRE(replica->Set("own", "1", SetOptions()).ok());
  uint64_t first = 0;
  REQUIRE(*(*reader)->Next(&first, &rep));
  ReplicationState state;
  CHECK(replica->ClassifyWalBatch(&rep, &state) == WalBatchOrigin::kStateOnly);
  REQUIRE(*(*reader)->Next(&first, &rep));
  const std::string own = rep;
  CHECK(replica->ClassifyWalBatch(&rep, &state) == WalBatchOrigin::kOwn);
  CHECK(rep == own);
}

}  // namespace replication_test
