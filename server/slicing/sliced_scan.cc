#include "server/slicing/sliced_scan.h"

#include <algorithm>
#include <chrono>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "config/current_db.h"
#include "server/commands/reply_budget.h"
#include "server/protocol/reply.h"
#include "server/server_stats.h"
#include "server/settings.h"
#include "storage/numbers.h"

namespace rockcache::server {
namespace {

// Entries examined per store call of a sliced scan; the step's clock is read between calls. Each
// call opens an iterator (and for a collection reads its meta), so this keeps that overhead
// small beside the walk.
constexpr uint64_t kExaminedPerCall = 256;

// Reply bytes counted for a score (its digits), as ResultBytes counts an item.
constexpr uint64_t kScoreBytes = 24;

// A scan's items so far; the vector of its target is used.
struct ScanItems {
  std::vector<std::string> names;                          // SCAN keys, SSCAN members
  std::vector<std::pair<std::string, std::string>> pairs;  // HSCAN
  std::vector<storage::ScoredMember> scored;               // ZSCAN
};

template <typename T>
void AppendAll(std::vector<T>* to, std::vector<T>&& from) {
  if (to->empty()) {
    *to = std::move(from);
    return;
  }
  to->insert(to->end(), std::make_move_iterator(from.begin()), std::make_move_iterator(from.end()));
}

// MATCH "" on a collection: the store reads "" as "everything"; only the item named "" matches.
template <typename T, typename Name>
void KeepEmptyNames(std::vector<T>* items, Name name) {
  items->erase(std::remove_if(items->begin(), items->end(),
                              [&](const T& item) { return !name(item).empty(); }),
               items->end());
}

// One store call examining about `count` entries from `cursor`: appends its items to *items and
// sets *next. `max_bytes` bounds SCAN's result (storage's OverLimit past it); the collection
// scans take no bound (the caller counts their items).
Status ScanOnce(storage::Store* store, const ScanRequest& request, uint64_t cursor, uint64_t count,
                uint64_t max_bytes, ScanItems* items, uint64_t* next) {
  const bool only_empty = request.target != ScanTarget::kKeys && request.pattern.empty();
  switch (request.target) {
    case ScanTarget::kKeys: {
      auto result = store->Scan(cursor, request.pattern, count, request.type, max_bytes);
      if (!result.ok()) return result.status();
      *next = result->next_cursor;
      AppendAll(&items->names, std::move(result->keys));
      return Status::OK();
    }
    case ScanTarget::kSet: {
      auto result = store->SScan(request.key, cursor, request.pattern, count);
      if (!result.ok()) return result.status();
      *next = result->next_cursor;
      if (only_empty) KeepEmptyNames(&result->keys, [](const std::string& m) { return m; });
      AppendAll(&items->names, std::move(result->keys));
      return Status::OK();
    }
    case ScanTarget::kHash: {
      auto result = store->HScan(request.key, cursor, request.pattern, count);
      if (!result.ok()) return result.status();
      *next = result->next_cursor;
      if (only_empty) KeepEmptyNames(&result->items, [](const auto& p) { return p.first; });
      AppendAll(&items->pairs, std::move(result->items));
      return Status::OK();
    }
    case ScanTarget::kZSet: {
      auto result = store->ZScan(request.key, cursor, request.pattern, count);
      if (!result.ok()) return result.status();
      *next = result->next_cursor;
      if (only_empty) KeepEmptyNames(&result->items, [](const auto& m) { return m.member; });
      AppendAll(&items->scored, std::move(result->items));
      return Status::OK();
    }
  }
  return Status::OK();
}

// [next cursor, [items...]] for `target`.
void AppendScanReply(ScanTarget target, uint64_t next, const ScanItems& items, std::string* out) {
  AppendArrayHeader(out, 2);
  AppendBulk(out, std::to_string(next));
  switch (target) {
    case ScanTarget::kKeys:
    case ScanTarget::kSet:
      AppendArrayHeader(out, static_cast<int64_t>(items.names.size()));
      for (const auto& name : items.names) AppendBulk(out, name);
      return;
    case ScanTarget::kHash:
      AppendArrayHeader(out, static_cast<int64_t>(items.pairs.size() * 2));
      for (const auto& [field, value] : items.pairs) {
        AppendBulk(out, field);
        AppendBulk(out, value);
      }
      return;
    case ScanTarget::kZSet:
      AppendArrayHeader(out, static_cast<int64_t>(items.scored.size() * 2));
      for (const auto& item : items.scored) {
        AppendBulk(out, item.member);
        AppendBulk(out, storage::FormatDouble(item.score));
      }
      return;
  }
}

// A big-COUNT scan in progress (see the header): the request (owned), the cursor reached, the
// COUNT left and the items so far.
class SlicedScan final : public SlicedRead {
 public:
  SlicedScan(storage::Store* store, int db, const ScanRequest& request, uint64_t max_bytes)
      : store_(store),
        db_(db),
        key_(request.key),
        pattern_(request.pattern),
        request_(request),
        cursor_(request.cursor),
        left_(request.count),
        room_(max_bytes) {
    request_.key = key_;  // the views now point at the copies
    request_.pattern = pattern_;
  }

  Status Step(const Settings& settings, std::string* out, bool* complete) override {
    using SteadyClock = std::chrono::steady_clock;
    DbScope scope(db_);
    const uint64_t step_items =
        std::max<uint64_t>(1, settings.slice_items.load(std::memory_order_relaxed));
    const auto deadline =
        SteadyClock::now() +
        std::chrono::microseconds(settings.slice_usec.load(std::memory_order_relaxed));
    *complete = false;
    uint64_t examined = 0;
    while (examined < step_items) {
      const uint64_t n = std::min({kExaminedPerCall, step_items - examined, left_});
      uint64_t next = 0;
      const size_t before = Size();
      Status s = ScanOnce(store_, request_, cursor_, n, room_, &items_, &next);
      if (s.IsOverLimit()) return s;
      if (!s.ok()) {  // nothing of the reply was sent: the error is the reply
        AppendStatusError(out, s);
        *complete = true;
        return Status::OK();
      }
      if (!Charge(before)) return Status::OverLimit();
      cursor_ = next;
      left_ -= n;
      examined += n;
      if (cursor_ == 0 || left_ == 0) {
        AppendScanReply(request_.target, cursor_, items_, out);
        *complete = true;
        return Status::OK();
      }
      if (SteadyClock::now() >= deadline) break;
    }
    return Status::OK();
  }

 private:
  size_t Size() const {
    switch (request_.target) {
      case ScanTarget::kHash:
        return items_.pairs.size();
      case ScanTarget::kZSet:
        return items_.scored.size();
      default:
        return items_.names.size();
    }
  }

  // Counts the items from index `from` on against room_ (ResultBytes's rule); false past it.
  bool Charge(size_t from) {
    uint64_t charge = 0;
    switch (request_.target) {
      case ScanTarget::kHash:
        for (size_t i = from; i < items_.pairs.size(); ++i) {
          charge += items_.pairs[i].first.size() + items_.pairs[i].second.size() +
                    2 * storage::kResultItemOverhead;
        }
        break;
      case ScanTarget::kZSet:
        for (size_t i = from; i < items_.scored.size(); ++i) {
          charge += items_.scored[i].member.size() + kScoreBytes + 2 * storage::kResultItemOverhead;
        }
        break;
      default:
        for (size_t i = from; i < items_.names.size(); ++i) {
          charge += items_.names[i].size() + storage::kResultItemOverhead;
        }
        break;
    }
    if (charge > room_) return false;
    room_ -= charge;
    return true;
  }

  storage::Store* const store_;
  const int db_;  // physical
  const std::string key_;
  const std::string pattern_;
  ScanRequest request_;  // its views point at key_ and pattern_
  uint64_t cursor_;      // where the next call resumes
  uint64_t left_;        // COUNT not yet examined
  uint64_t room_;        // item bytes still allowed (ResultBytes's rule)
  ScanItems items_;
};

}  // namespace

std::unique_ptr<SlicedRead> NewSlicedScan(storage::Store* store, int db, const ScanRequest& request,
                                          uint64_t max_bytes) {
  return std::make_unique<SlicedScan>(store, db, request, max_bytes);
}

bool ReplyScan(CommandContext& ctx, const ScanRequest& request, std::string* out) {
  const Settings& settings = ctx.settings();
  const uint64_t step_items = settings.slice_items.load(std::memory_order_relaxed);
  if (request.count <= step_items || ctx.slices == nullptr) {
    // The one-call path: the whole COUNT in one store call, as before slicing.
    ScanItems items;
    uint64_t next = 0;
    const uint64_t max_bytes =
        request.target == ScanTarget::kKeys ? ReplyRoom(ctx, *out) : storage::kNoByteLimit;
    Status s =
        ScanOnce(ctx.store, request, request.cursor, request.count, max_bytes, &items, &next);
    if (ReplyOverBudget(ctx, *out, s)) return false;
    if (!s.ok()) {
      AppendStatusError(out, s);
      return true;
    }
    AppendScanReply(request.target, next, items, out);
    return true;
  }
  auto scan = NewSlicedScan(ctx.store, CurrentDb(), request, ReplyRoom(ctx, *out));
  bool complete = false;
  Status s = scan->Step(settings, out, &complete);
  if (ReplyOverBudget(ctx, *out, s)) return false;
  if (!s.ok()) {  // OverLimit without a budget cannot happen (the room is unbounded)
    AppendStatusError(out, s);
    return true;
  }
  if (complete) return true;  // cursor 0 within one step: an ordinary command
  ctx.stats().sliced_commands.fetch_add(1, std::memory_order_relaxed);
  ctx.stats().command_slices.fetch_add(1, std::memory_order_relaxed);
  ctx.slices->deferred = std::move(scan);
  return false;
}

}  // namespace rockcache::server
