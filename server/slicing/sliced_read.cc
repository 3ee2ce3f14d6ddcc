#include "server/slicing/sliced_read.h"

#include <chrono>

#include "server/commands/reply_budget.h"
#include "server/protocol/reply.h"
#include "server/server_stats.h"
#include "server/settings.h"
#include "storage/numbers.h"

namespace rockcache::server {
namespace {

// Entries walked per RangeRead call; the step's clock is read between calls. Each call opens an
// iterator and seeks (a few microseconds), so this keeps that under a few percent of the walk.
// Counting passes walk kVisitsPerCall entries per call; item passes walk up to
// kItemVisitsPerCall, but end a call once it has appended kBytesPerCall reply bytes, so that a
// step over big items still reads the clock every kBytesPerCall bytes. Item passes take more
// per call so that a read of up to kItemVisitsPerCall items (LRANGE 0 599 ...) is one call: one
// iterator, no clock reading in between.
constexpr uint64_t kVisitsPerCall = 128;
constexpr uint64_t kItemVisitsPerCall = 1024;
constexpr size_t kBytesPerCall = 64 * 1024;

// The reply's header for `total` entries: an array; a set, a map, pairs under RESP3.
void AppendHeader(ItemFormat format, std::string* out, int64_t total) {
  switch (format) {
    case ItemFormat::kKey:
    case ItemFormat::kValue:
      return AppendArrayHeader(out, total);
    case ItemFormat::kSetMember:
      return AppendSetHeader(out, total);
    case ItemFormat::kKeyValue:
      return AppendMapHeader(out, total);
    case ItemFormat::kMemberScore:
      return AppendPairsHeader(out, total, true);
  }
}

}  // namespace

SlicedRangeRead::SlicedRangeRead(std::unique_ptr<storage::RangeRead> read, ItemFormat format)
    : read_(std::move(read)), format_(format) {
  counting_ = read_->total() < 0;
  if (!counting_) total_ = static_cast<uint64_t>(read_->total());
}

Status SlicedRangeRead::Step(const Settings& settings, std::string* out, bool* complete) {
  using SteadyClock = std::chrono::steady_clock;
  const uint64_t max_visits = settings.slice_items.load(std::memory_order_relaxed);
  const auto deadline =
      SteadyClock::now() +
      std::chrono::microseconds(settings.slice_usec.load(std::memory_order_relaxed));
  *complete = false;
  uint64_t visits = 0;
  size_t call_start = 0;     // out's size when the current call began
  bool call_paused = false;  // the call ended at kBytesPerCall
  const storage::RangeRead::ItemVisitor append = [this, out, &call_start, &call_paused](
                                                     std::string_view key, std::string_view value,
                                                     double score) {
    switch (format_) {
      case ItemFormat::kKey:
      case ItemFormat::kSetMember:
        AppendBulk(out, key);
        break;
      case ItemFormat::kValue:
        AppendBulk(out, value);
        break;
      case ItemFormat::kKeyValue:
        AppendBulk(out, key);
        AppendBulk(out, value);
        break;
      case ItemFormat::kMemberScore:
        AppendScoredMember(out, key, storage::FormatDouble(score), true);
        break;
    }
    call_paused = out->size() - call_start >= kBytesPerCall;
    return !call_paused;
  };
  while (visits < max_visits) {
    const uint64_t n =
        std::min(counting_ ? kVisitsPerCall : kItemVisitsPerCall, max_visits - visits);
    bool done = false;
    uint64_t emitted = 0;
    if (counting_) {
      if (Status s = read_->Next(n, nullptr, &total_, &done); !s.ok()) return s;
      if (done) {
        counting_ = false;
        read_->Restart();
      }
    } else {
      if (!header_sent_) {
        AppendHeader(format_, out, static_cast<int64_t>(total_));
        header_sent_ = true;
      }
      call_start = out->size();
      call_paused = false;
      if (Status s = read_->Visit(n, append, &emitted, &done); !s.ok()) return s;
      emitted_ += emitted;
      if (done) {
        // The header announced total_ items: a storage whose count disagrees with its entries
        // cannot be answered correctly any more.
        if (emitted_ != total_) return Status::Corruption("range read count changed");
        *complete = true;
        return Status::OK();
      }
    }
    // A call ended by its bytes walked fewer entries than n: at least its items.
    visits += call_paused ? std::max<uint64_t>(emitted, 1) : n;
    if (SteadyClock::now() >= deadline) break;
  }
  return Status::OK();
}

bool ReplyRange(CommandContext& ctx, const storage::RangeQuery& query, ItemFormat format,
                std::string* out) {
  auto opened = ctx.store->OpenRangeRead(query);
  if (!opened.ok()) {
    AppendStatusError(out, opened.status());
    return false;
  }
  auto read = std::make_unique<SlicedRangeRead>(std::move(*opened), format);
  const Settings& settings = ctx.settings();
  const size_t reply_start = out->size();
  uint64_t steps = 0;
  for (;;) {
    bool complete = false;
    Status s = read->Step(settings, out, &complete);
    ++steps;
    if (!s.ok()) {
      out->resize(reply_start);  // nothing of it was sent yet: reply the error instead
      AppendStatusError(out, s);
      return false;
    }
    if (ReplyOverBudget(ctx, *out)) return false;
    if (complete) {
      if (steps > 1) {  // sliced in place (no sink): still counted
        ctx.stats().sliced_commands.fetch_add(1, std::memory_order_relaxed);
        ctx.stats().command_slices.fetch_add(steps, std::memory_order_relaxed);
      }
      return true;
    }
    if (ctx.slices != nullptr) {
      ctx.stats().sliced_commands.fetch_add(1, std::memory_order_relaxed);
      ctx.stats().command_slices.fetch_add(1, std::memory_order_relaxed);
      ctx.slices->deferred = std::move(read);
      return false;
    }
  }
}

}  // namespace rockcache::server
