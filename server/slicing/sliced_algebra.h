// Sliced set and sorted-set algebra: the read-only SINTER / SUNION / SDIFF / SINTERCARD and
// ZUNION / ZINTER / ZDIFF / ZINTERCARD run as sliced commands (server/slicing/sliced_read.h)
// when their inputs are big, instead of holding a worker while every input is read whole. The
// *STORE forms are not sliced (they write, under their key locks, in one go).
//
// When. The handler estimates the work of the unsliced code (AlgebraWork: entries walked plus
// point lookups) from the inputs' sizes. Work within one step (`slice-items`), or a caller that
// cannot continue (no ctx.slices: inside EXEC), takes the existing unsliced path, unchanged.
//
// How. ReplyAlgebra opens one storage::RangeRead per input (kSet; for a sorted set the ZRANGE by
// rank over all its members, with scores) and the steps run the unsliced algorithms over them:
// - union: walks every input in order, accumulating the members (SUNION: an ordered set; ZUNION:
//   member -> score, each input's score times its weight aggregated in input order).
// - intersection / difference: walks the driving input (SINTER: the smallest; ZINTER: the first
//   of the inputs as the caller ordered them, smallest first; SDIFF/ZDIFF: the first) and probes
//   the others for each batch of its members (RangeRead::Lookup, on their snapshots); SINTERCARD
//   and ZINTERCARD only count, and stop at LIMIT.
// Each step does at most `slice-items` entries of work (a probe counts as one) or `slice-usec`
// microseconds. The items are kept in the SlicedAlgebra and the whole reply is written by the
// last step (earlier steps append nothing), byte for byte what the unsliced code replies:
// SINTER/SUNION/SDIFF members in byte order; ZUNION/ZINTER/ZDIFF by (score, member), scores
// aggregated exactly as zset_algebra.cc does (WEIGHTS, AGGREGATE, NaN read as 0).
//
// One consistent view. Each RangeRead takes its own RocksDB snapshot, but ReplyAlgebra opens them
// all in the first step, in the handler, while the command holds the locks of all its keys: no
// write to those keys can land between the snapshots, so together they are the state of the
// inputs at the command's start, as one snapshot would be (and what Redis replies). Writes after
// the first step are in none of them. Errors: a key of the wrong type fails its RangeRead's open,
// in the first step, which replies WRONGTYPE as today; so no type is discovered later. A storage
// error in a later step (nothing was sent yet) becomes the reply.
//
// Steps hold no key lock and never touch the cache; every storage call goes through the
// RangeReads, which set the command's physical database themselves.
//
// Output limit. The result kept is bounded by the client's reply room at the command's start
// (ReplyRoom; storage's ResultBytes rule: each result member's bytes plus kResultItemOverhead):
// past it a step returns Status::OverLimit and the client is closed as over its output limit,
// as the unsliced commands close it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "server/commands/command.h"

namespace rockcache::server {

// Which command.
enum class AlgebraOp {
  kSInter,
  kSUnion,
  kSDiff,
  kSInterCard,
  kZUnion,
  kZInter,
  kZDiff,
  kZInterCard,
};

// ZUNION / ZINTER's AGGREGATE.
enum class ScoreAggregate { kSum, kMin, kMax };

// Redis zunionInterAggregate: folds `value` into *target (SUM reads NaN as 0).
void AggregateScore(double* target, double value, ScoreAggregate aggregate);

// One input key.
struct AlgebraInput {
  std::string key;
  bool zset = false;  // a sorted set; else a set (or absent). Z commands: each set member scores 1
  double weight = 1;  // ZUNION / ZINTER WEIGHTS
};

// A parsed algebra command. `inputs` in the order the unsliced code uses them: the ZUNION /
// ZINTER / ZINTERCARD inputs stable-sorted smallest first by the caller (SINTER's are sorted here
// by their snapshot's size); SDIFF / ZDIFF in argument order.
struct AlgebraRequest {
  AlgebraOp op = AlgebraOp::kSUnion;
  std::vector<AlgebraInput> inputs;  // at least one
  ScoreAggregate aggregate = ScoreAggregate::kSum;
  bool with_scores = false;  // ZUNION / ZINTER / ZDIFF WITHSCORES
  uint64_t limit = 0;        // SINTERCARD / ZINTERCARD LIMIT; 0 = none
};

// The work (entries walked plus probes) of the unsliced code on inputs of these sizes, in the
// order of AlgebraRequest::inputs (for SINTER any order): what decides whether to slice.
uint64_t AlgebraWork(AlgebraOp op, const std::vector<int64_t>& sizes);

// Worker, in a handler holding the command's key locks: replies `request` sliced as described at
// the top (opens the inputs' reads and runs the first step; without ctx.slices, every step). A
// store error (WRONGTYPE) is the reply instead. Returns true when this call appended the whole
// reply; false when the rest was deferred to ctx.slices (nothing appended yet), or when the result
// passed the reply budget (ctx.reply_budget is then marked exceeded and nothing is appended).
bool ReplyAlgebra(CommandContext& ctx, const AlgebraRequest& request, std::string* out);

}  // namespace rockcache::server
