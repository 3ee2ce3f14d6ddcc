// server/group_charges — how a group task (server/group_commit.h) splits the time it ran among
// the clients whose batches it carried, for the MLFQ (pool/mlfq.h: a client's level comes from
// the size of its recent pieces of work).
//
// A group runs its batches' commands one after another, so the time from the start of one
// command to the start of the next belongs to the client that sent it. A segment's commit (one
// RocksDB write of every write command the segment ran) is work done for all of those commands
// at once: its time is split among the clients of the commands it made durable, in proportion
// to how many each had there. Charging it to whichever client ran last would charge that client
// for the whole group's memtable inserts (milliseconds for a group of hundreds of writes) and
// demote a client that only sends single SETs.
//
// Times are nanoseconds on any monotonic clock. Pure; one instance per group task, one thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace rockcache::server {

class GroupCharges {
 public:
  explicit GroupCharges(size_t batches) : spent_(batches, 0) {}

  // From now_ns on, time is charged to batch `batch`.
  void ChargeTo(size_t batch, uint64_t now_ns) {
    Close(now_ns);
    charging_ = batch;
  }

  // Charges the time up to now_ns to the batch being charged (before shared work starts).
  void Mark(uint64_t now_ns) { Close(now_ns); }

  // Shared work ran from the last mark to now_ns for the commands whose batches `owners` lists
  // (one entry per command): split equally among the entries. The batch charged before goes
  // on being charged after it.
  void Shared(const std::vector<size_t>& owners, uint64_t now_ns) {
    if (owners.empty()) return Close(now_ns);
    const uint64_t ns = Since(now_ns);
    mark_ns_ = now_ns;
    const uint64_t each = ns / owners.size();
    for (size_t b : owners) {
      if (b < spent_.size()) spent_[b] += each;
    }
  }

  // Closes the open interval at now_ns; spent()[b] is then batch b's time.
  void Finish(uint64_t now_ns) { Close(now_ns); }
  const std::vector<uint64_t>& spent() const { return spent_; }

 private:
  uint64_t Since(uint64_t now_ns) const {
    return started_ && now_ns > mark_ns_ ? now_ns - mark_ns_ : 0;
  }
  void Close(uint64_t now_ns) {
    const uint64_t ns = Since(now_ns);
    if (charging_ < spent_.size()) spent_[charging_] += ns;
    mark_ns_ = now_ns;
    started_ = true;
  }

  std::vector<uint64_t> spent_;  // ns per batch
  size_t charging_ = SIZE_MAX;   // the batch being charged (none before the first ChargeTo)
  uint64_t mark_ns_ = 0;         // when the open interval began
  bool started_ = false;
};

}  // namespace rockcache::server
