// Sliced reads: commands whose work grows with the data (KEYS, HGETALL/HKEYS/HVALS, SMEMBERS,
// LRANGE, the ZRANGE family, SCAN/HSCAN/SSCAN/ZSCAN with a COUNT above `slice-items`, and the
// read-only set / sorted-set algebra SINTER/SUNION/SDIFF/SINTERCARD, ZUNION/ZINTER/ZDIFF/
// ZINTERCARD over big inputs, and SORT / SORT_RO without STORE over big inputs) run as steps of
// bounded cost (`slice-items` entries walked or `slice-usec` microseconds, whichever comes
// first) and give the worker back to the pool between steps, so that big reads do not hold
// workers for hundreds of milliseconds while small commands queue behind them.
//
// A SlicedRead is what the remaining steps need. This file has the range reads
// (SlicedRangeRead, ReplyRange: the reply streamed chunk by chunk, as described below);
// server/slicing/sliced_scan.h has the scans (ReplyScan: a chain of store scans resuming at each
// other's cursor, over the current state rather than one snapshot, the reply written whole by
// the last step since its cursor comes first; earlier steps post nothing);
// server/slicing/sliced_algebra.h has the set / sorted-set algebra (ReplyAlgebra: one range read
// per input, all opened in the first step under the command's key locks, the result built step
// by step and written whole by the last step); server/slicing/sliced_sort.h has SORT / SORT_RO
// (one range read whose snapshot also serves every BY / GET lookup; elements loaded and weighed,
// merge-sorted in steps, then the reply streamed chunk by chunk as ReplyRange streams it).
//
// How a sliced command runs
// 1. Its handler calls ReplyRange on a worker, inside its batch's group (server/group_commit.h),
//    holding its key locks. ReplyRange opens a storage::RangeRead — a RocksDB snapshot — and runs
//    the first step. A read that finishes in that step (a small collection) replies whole, as
//    before: small commands pay one snapshot, as the unsliced read did, and nothing else.
// 2. Otherwise the reply so far (the array header and the first items) is the command's reply in
//    the group, and the SlicedRead goes to the group through CommandContext::slices. The group
//    runs nothing more of that connection's batch; it posts the replies so far as a *partial*
//    completion (the connection stays in flight: it parses nothing more, so pipeline order
//    holds) and then submits the continuation (SubmitSliceStep, the one place continuation tasks
//    are submitted).
// 3. Each continuation step runs on a worker, appends the next items and posts them to the loop
//    as another partial completion, then resubmits itself with hint = connection id. The last
//    step posts the final completion with the rest of the batch, which the loop submits as a new
//    batch.
//
// Consistency and the cache. The steps read the snapshot taken in step 1, under the command's
// key locks, after the group committed the connection's earlier writes: the reply is the state
// at the command's start, which is what Redis, where the command runs atomically, replies.
// Writes that commit between steps are not in it, and cannot make it mix states: a snapshot is
// one consistent past state. The continuation holds no key lock (a writer need not wait for a
// big read) and never touches the cache: it neither reads nor fills it, so coherence
// (docs/DESIGN.md) is not concerned. A read that finishes in its first step fills the cache as
// before.
//
// The array header needs the count first. Where the snapshot's meta gives it (HLEN, SCARD, the
// list's length, a ZRANGE by rank) it is used. Where it does not (KEYS, ZRANGEBYSCORE/BYLEX), a
// counting pass over the same snapshot runs first, sliced like the rest, and the items are read
// in a second pass: twice the walking, but the reply is streamed and never buffered whole, so
// peak memory stays one step's items.
//
// Output limit. Each chunk is counted in ClientInfo::slice_queued_bytes until the loop appends it
// to the connection's output. A step first checks pending (written-not-sent) plus queued bytes
// against client-output-buffer-limit's hard limit; past it the client is closed as Redis closes
// it, with nothing more sent. The loop applies the same limits (hard and soft) to every chunk it
// appends (NetLoop::Flush). Memory held for a slow reader is thus bounded by the limit plus one
// step.
//
// End of life. When the connection closes (client gone, killed, over a limit), the loop sets
// ClientInfo::closed; the next step sees it and drops the read (releasing the snapshot). Pool
// shutdown Cancel()s a pending step: the read is dropped and the client closed.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "server/commands/command.h"
#include "storage/store.h"

namespace rockcache::server {

class Server;
struct Settings;

// How each item of a range read is written.
enum class ItemFormat {
  kKey,          // one bulk: the field / element / key (HKEYS, LRANGE, KEYS)
  kSetMember,    // one bulk, the reply a set under RESP3 (SMEMBERS)
  kValue,        // one bulk: the value (HVALS)
  kKeyValue,     // two bulks: field and value, the reply a map under RESP3 (HGETALL)
  kMemberScore,  // member and score, [member, score] pairs under RESP3 (ZRANGE ... WITHSCORES)
};

// A sliced command in progress: what its remaining steps need (a range read's snapshot and
// position, a scan's cursor and items). Worker threads, one at a time.
class SlicedRead {
 public:
  virtual ~SlicedRead() = default;
  // One step of bounded cost (see the top): appends reply bytes to *out (possibly none) and sets
  // *complete when the reply is whole. Status::OverLimit(): the reply passed the client's
  // output-buffer room; the caller closes the client as over its limit. Any other error comes
  // after reply bytes were sent and cannot be replied: the caller closes the client. May block
  // on disk.
  [[nodiscard]] virtual Status Step(const Settings& settings, std::string* out, bool* complete) = 0;
};

// A range read (storage::RangeRead) in progress: its snapshot, its position, and what it has
// replied, streamed step by step.
class SlicedRangeRead final : public SlicedRead {
 public:
  SlicedRangeRead(std::unique_ptr<storage::RangeRead> read, ItemFormat format);
  [[nodiscard]] Status Step(const Settings& settings, std::string* out, bool* complete) override;

 private:
  std::unique_ptr<storage::RangeRead> read_;
  const ItemFormat format_;
  bool counting_ = false;  // the first pass of a read whose count is unknown
  bool header_sent_ = false;
  uint64_t total_ = 0;    // items the reply announces
  uint64_t emitted_ = 0;  // items replied so far
};

// Where a handler leaves its SlicedRead when the first step did not finish (set on
// CommandContext::slices by the group for commands that may be sliced).
struct SliceSink {
  std::unique_ptr<SlicedRead> deferred;
};

// Worker, in a handler: replies `query`'s items as one RESP2 array, sliced as described at the
// top. Appends an error reply when the read cannot start (WRONGTYPE). Returns true when the whole
// reply was appended in this call (the caller may then fill the cache); false when the rest was
// deferred to ctx.slices, or the reply passed the reply budget (ctx.reply_budget is then marked
// exceeded). Without ctx.slices (inside EXEC, or any caller that cannot continue), every step
// runs here.
bool ReplyRange(CommandContext& ctx, const storage::RangeQuery& query, ItemFormat format,
                std::string* out);

}  // namespace rockcache::server
