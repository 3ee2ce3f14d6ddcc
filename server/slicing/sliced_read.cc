#include "server/slicing/sliced_read.h"

#include <chrono>

#include "server/commands/reply_budget.h"
#include "server/protocol/reply.h"
#include "server/server.h"
#include "storage/numbers.h"

namespace rockcache::server {
namespace {

// Entries walked per RangeRead::Next call; the step's clock is read between calls. Each call
// re-seeks (about a microsecond), so this keeps that under a few percent of the walk.
constexpr uint64_t kVisitsPerCall = 128;

int ItemsPerEntry(ItemFormat format) {
  return format == ItemFormat::kKeyValue || format == ItemFormat::kMemberScore ? 2 : 1;
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
  while (visits < max_visits) {
    const uint64_t n = std::min(kVisitsPerCall, max_visits - visits);
    bool done = false;
    if (counting_) {
      if (Status s = read_->Next(n, nullptr, &total_, &done); !s.ok()) return s;
      if (done) {
        counting_ = false;
        read_->Restart();
      }
    } else {
      if (!header_sent_) {
        AppendArrayHeader(out, static_cast<int64_t>(total_) * ItemsPerEntry(format_));
        header_sent_ = true;
      }
      items_.clear();
      uint64_t emitted = 0;
      if (Status s = read_->Next(n, &items_, &emitted, &done); !s.ok()) return s;
      for (const auto& item : items_) {
        switch (format_) {
          case ItemFormat::kKey:
            AppendBulk(out, item.key);
            break;
          case ItemFormat::kValue:
            AppendBulk(out, item.value);
            break;
          case ItemFormat::kKeyValue:
            AppendBulk(out, item.key);
            AppendBulk(out, item.value);
            break;
          case ItemFormat::kMemberScore:
            AppendBulk(out, item.key);
            AppendBulk(out, storage::FormatDouble(item.score));
            break;
        }
      }
      emitted_ += emitted;
      if (done) {
        // The header announced total_ items: a storage whose count disagrees with its entries
        // cannot be answered correctly any more.
        if (emitted_ != total_) return Status::Corruption("range read count changed");
        *complete = true;
        return Status::OK();
      }
    }
    visits += n;
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
  const Settings& settings = ctx.server->settings();
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
        ctx.server->stats().sliced_commands.fetch_add(1, std::memory_order_relaxed);
        ctx.server->stats().command_slices.fetch_add(steps, std::memory_order_relaxed);
      }
      return true;
    }
    if (ctx.slices != nullptr) {
      ctx.server->stats().sliced_commands.fetch_add(1, std::memory_order_relaxed);
      ctx.server->stats().command_slices.fetch_add(1, std::memory_order_relaxed);
      ctx.slices->deferred = std::move(read);
      return false;
    }
  }
}

}  // namespace rockcache::server
