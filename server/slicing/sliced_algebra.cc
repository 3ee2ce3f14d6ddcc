#include "server/slicing/sliced_algebra.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <optional>
#include <set>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "server/commands/reply_budget.h"
#include "server/protocol/reply.h"
#include "server/server_stats.h"
#include "server/settings.h"
#include "server/slicing/sliced_read.h"
#include "storage/numbers.h"
#include "storage/store.h"

namespace rockcache::server {
namespace {

// Entries walked per RangeRead::Next call (a batch of the driving input: probed together); the
// step's clock is read between calls.
constexpr uint64_t kWalkPerCall = 128;

bool IsUnion(AlgebraOp op) { return op == AlgebraOp::kSUnion || op == AlgebraOp::kZUnion; }
bool IsDiff(AlgebraOp op) { return op == AlgebraOp::kSDiff || op == AlgebraOp::kZDiff; }
bool IsCard(AlgebraOp op) { return op == AlgebraOp::kSInterCard || op == AlgebraOp::kZInterCard; }
bool IsZ(AlgebraOp op) {
  return op == AlgebraOp::kZUnion || op == AlgebraOp::kZInter || op == AlgebraOp::kZDiff ||
         op == AlgebraOp::kZInterCard;
}

// A big algebra command in progress (see the header): the inputs' reads, where the walk is and
// the result so far.
class SlicedAlgebra final : public SlicedRead {
 public:
  SlicedAlgebra(AlgebraRequest request, std::vector<std::unique_ptr<storage::RangeRead>> reads,
                uint64_t max_bytes)
      : request_(std::move(request)), reads_(std::move(reads)), room_(max_bytes) {
    if (IsUnion(request_.op)) return;
    // Intersections end at once when an input is empty, a difference when its first one is.
    for (size_t i = 0; i < reads_.size(); ++i) {
      if (reads_[i]->total() == 0 && (i == 0 || !IsDiff(request_.op))) finished_ = true;
    }
  }

  Status Step(const Settings& settings, std::string* out, bool* complete) override {
    using SteadyClock = std::chrono::steady_clock;
    const uint64_t step_work =
        std::max<uint64_t>(1, settings.slice_items.load(std::memory_order_relaxed));
    const auto deadline =
        SteadyClock::now() +
        std::chrono::microseconds(settings.slice_usec.load(std::memory_order_relaxed));
    *complete = false;
    uint64_t work = 0;
    while (!finished_ && work < step_work) {
      Status s = IsUnion(request_.op) ? UnionBatch(step_work - work, &work)
                                      : FilterBatch(step_work - work, &work);
      if (s.IsOverLimit()) return s;
      if (!s.ok()) {  // nothing of the reply was sent: the error is the reply
        AppendStatusError(out, s);
        *complete = true;
        return Status::OK();
      }
      if (SteadyClock::now() >= deadline) break;
    }
    if (finished_) {
      AppendResult(out);
      *complete = true;
    }
    return Status::OK();
  }

 private:
  // Counts a result member against room_; false past it.
  bool Charge(std::string_view member) {
    const uint64_t charge = member.size() + storage::kResultItemOverhead;
    if (charge > room_) return false;
    room_ -= charge;
    return true;
  }

  // The score an item of input i contributes (weighted; a set member scores 1; NaN read as 0).
  double WeightedScore(size_t i, const storage::RangeItem& item) const {
    const double score = request_.inputs[i].weight * (request_.inputs[i].zset ? item.score : 1.0);
    return std::isnan(score) ? 0 : score;
  }

  // Union: the next entries of the input being walked.
  Status UnionBatch(uint64_t allowed, uint64_t* work) {
    if (current_ == reads_.size()) {
      finished_ = true;
      return Status::OK();
    }
    const uint64_t n = std::min(kWalkPerCall, allowed);
    items_.clear();
    uint64_t emitted = 0;
    bool done = false;
    if (Status s = reads_[current_]->Next(n, &items_, &emitted, &done); !s.ok()) return s;
    *work += n;
    for (auto& item : items_) {
      if (request_.op == AlgebraOp::kSUnion) {
        auto [it, added] = members_set_.insert(std::move(item.key));
        if (added && !Charge(*it)) return Status::OverLimit();
        continue;
      }
      const double score = WeightedScore(current_, item);
      auto found = scores_.find(item.key);
      if (found != scores_.end()) {
        AggregateScore(&found->second, score, request_.aggregate);
        continue;
      }
      if (!Charge(item.key)) return Status::OverLimit();
      scores_.emplace(std::move(item.key), score);
    }
    if (done && ++current_ == reads_.size()) finished_ = true;
    return Status::OK();
  }

  // Intersection / difference: the next batch of the driving input (reads_[0]), probed in the
  // others.
  Status FilterBatch(uint64_t allowed, uint64_t* work) {
    const uint64_t inputs = reads_.size();
    const uint64_t n = std::max<uint64_t>(1, std::min(kWalkPerCall, allowed / inputs));
    items_.clear();
    uint64_t emitted = 0;
    bool done = false;
    if (Status s = reads_[0]->Next(n, &items_, &emitted, &done); !s.ok()) return s;
    *work += n * inputs;
    const bool diff = IsDiff(request_.op);
    std::vector<std::string_view> members;
    std::vector<double> scores;
    members.reserve(items_.size());
    for (const auto& item : items_) {
      members.emplace_back(item.key);
      scores.push_back(WeightedScore(0, item));
    }
    std::vector<bool> keep(members.size(), true);
    for (size_t j = 1; j < reads_.size(); ++j) {
      if (diff && reads_[j]->total() == 0) continue;
      if (Status s = reads_[j]->Lookup(members, &found_); !s.ok()) return s;
      for (size_t i = 0; i < members.size(); ++i) {
        if (!keep[i]) continue;
        if (diff) {
          if (found_[i]) keep[i] = false;
        } else if (!found_[i]) {
          keep[i] = false;
        } else if (IsZ(request_.op)) {
          double score = *found_[i] * request_.inputs[j].weight;
          AggregateScore(&scores[i], score, request_.aggregate);
        }
      }
    }
    for (size_t i = 0; i < members.size(); ++i) {
      if (!keep[i]) continue;
      if (IsCard(request_.op)) {
        ++card_;
        if (request_.limit != 0 && card_ >= request_.limit) {
          finished_ = true;
          return Status::OK();
        }
        continue;
      }
      if (!Charge(items_[i].key)) return Status::OverLimit();
      if (IsZ(request_.op)) {
        // ZDIFF keeps the first input's own score (its weight is 1: ZDIFF takes no WEIGHTS).
        scored_.push_back(storage::ScoredMember{std::move(items_[i].key), scores[i]});
      } else {
        members_.push_back(std::move(items_[i].key));
      }
    }
    if (done) finished_ = true;
    return Status::OK();
  }

  void AppendResult(std::string* out) {
    switch (request_.op) {
      case AlgebraOp::kSInterCard:
      case AlgebraOp::kZInterCard:
        AppendInteger(out, static_cast<int64_t>(card_));
        return;
      case AlgebraOp::kSUnion:
        AppendSetHeader(out, static_cast<int64_t>(members_set_.size()));
        for (const auto& member : members_set_) AppendBulk(out, member);
        return;
      case AlgebraOp::kSInter:
      case AlgebraOp::kSDiff:  // in the driving input's order: byte order
        AppendSetHeader(out, static_cast<int64_t>(members_.size()));
        for (const auto& member : members_) AppendBulk(out, member);
        return;
      default:
        break;
    }
    if (request_.op == AlgebraOp::kZUnion) {
      scored_.reserve(scores_.size());
      for (auto& [member, score] : scores_) scored_.push_back(storage::ScoredMember{member, score});
      scores_.clear();
    }
    std::sort(scored_.begin(), scored_.end(),
              [](const storage::ScoredMember& a, const storage::ScoredMember& b) {
                return a.score < b.score || (a.score == b.score && a.member < b.member);
              });
    const bool with_scores = request_.with_scores;
    AppendPairsHeader(out, static_cast<int64_t>(scored_.size()), with_scores);
    for (const auto& item : scored_) {
      AppendScoredMember(out, item.member,
                         with_scores ? storage::FormatScore(item.score) : std::string(),
                         with_scores);
    }
  }

  const AlgebraRequest request_;
  std::vector<std::unique_ptr<storage::RangeRead>> reads_;  // one per input, in its order
  uint64_t room_;          // result bytes still allowed (ResultBytes's rule)
  bool finished_ = false;  // the result is whole: the next step (or this one) replies
  size_t current_ = 0;     // union: the input being walked
  std::vector<storage::RangeItem> items_;           // one Next's items, reused
  std::vector<std::optional<double>> found_;        // one Lookup's answers, reused
  std::set<std::string> members_set_;               // SUNION
  std::vector<std::string> members_;                // SINTER, SDIFF
  std::unordered_map<std::string, double> scores_;  // ZUNION: member -> aggregated score
  std::vector<storage::ScoredMember> scored_;       // ZINTER, ZDIFF (ZUNION's, at the end)
  uint64_t card_ = 0;                               // SINTERCARD, ZINTERCARD
};

}  // namespace

void AggregateScore(double* target, double value, ScoreAggregate aggregate) {
  switch (aggregate) {
    case ScoreAggregate::kSum:
      *target += value;
      if (std::isnan(*target)) *target = 0;
      break;
    case ScoreAggregate::kMin:
      *target = value < *target ? value : *target;
      break;
    case ScoreAggregate::kMax:
      *target = value > *target ? value : *target;
      break;
  }
}

uint64_t AlgebraWork(AlgebraOp op, const std::vector<int64_t>& sizes) {
  if (sizes.empty()) return 0;
  uint64_t work = 0;
  if (IsUnion(op)) {
    for (int64_t size : sizes) work += static_cast<uint64_t>(std::max<int64_t>(0, size));
    return work;
  }
  // The driving input walked, each of its members probed in every other input.
  const int64_t driver = IsDiff(op) ? sizes[0] : *std::min_element(sizes.begin(), sizes.end());
  return static_cast<uint64_t>(std::max<int64_t>(0, driver)) * sizes.size();
}

bool ReplyAlgebra(CommandContext& ctx, const AlgebraRequest& request, std::string* out) {
  // Every read is opened here, under the command's key locks (see the header: one view).
  std::vector<std::unique_ptr<storage::RangeRead>> reads;
  reads.reserve(request.inputs.size());
  for (const AlgebraInput& input : request.inputs) {
    storage::RangeQuery query;
    query.kind = input.zset ? storage::RangeQuery::Kind::kZSet : storage::RangeQuery::Kind::kSet;
    query.key = input.key;  // a kZSet query's default zrange: every member by rank, with scores
    auto opened = ctx.store->OpenRangeRead(query);
    if (!opened.ok()) {
      AppendStatusError(out, opened.status());
      return true;
    }
    reads.push_back(std::move(*opened));
  }
  AlgebraRequest ordered = request;
  if (request.op == AlgebraOp::kSInter || request.op == AlgebraOp::kSInterCard) {
    // Walk the smallest set; which one does not change the reply (byte order either way).
    std::vector<size_t> order(reads.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return reads[a]->total() < reads[b]->total(); });
    std::vector<std::unique_ptr<storage::RangeRead>> sorted_reads;
    std::vector<AlgebraInput> sorted_inputs;
    for (size_t i : order) {
      sorted_reads.push_back(std::move(reads[i]));
      sorted_inputs.push_back(request.inputs[i]);
    }
    reads = std::move(sorted_reads);
    ordered.inputs = std::move(sorted_inputs);
  }
  auto algebra =
      std::make_unique<SlicedAlgebra>(std::move(ordered), std::move(reads), ReplyRoom(ctx, *out));
  bool complete = false;
  Status s = algebra->Step(ctx.settings(), out, &complete);
  if (ReplyOverBudget(ctx, *out, s)) return false;
  if (!s.ok()) {  // OverLimit without a budget cannot happen (the room is unbounded)
    AppendStatusError(out, s);
    return true;
  }
  if (complete) return true;    // finished within one step: an ordinary command
  if (ctx.slices == nullptr) {  // cannot continue: every step here
    while (!complete) {
      s = algebra->Step(ctx.settings(), out, &complete);
      if (ReplyOverBudget(ctx, *out, s)) return false;
      if (!s.ok()) {
        AppendStatusError(out, s);
        return true;
      }
    }
    return true;
  }
  ctx.stats().sliced_commands.fetch_add(1, std::memory_order_relaxed);
  ctx.stats().command_slices.fetch_add(1, std::memory_order_relaxed);
  ctx.slices->deferred = std::move(algebra);
  return false;
}

}  // namespace rockcache::server
