#include "server/slicing/sliced_sort.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <utility>

#include "server/commands/reply_budget.h"
#include "server/protocol/reply.h"
#include "server/server_stats.h"
#include "server/settings.h"
#include "server/slicing/sliced_read.h"

namespace rockcache::server {
namespace {

// Elements read (and weighed) per RangeRead::Next call; the step's clock is read between calls.
constexpr uint64_t kLoadPerCall = 128;
// Window elements replied per batch of GET lookups.
constexpr uint64_t kEmitPerBatch = 128;
// Merge moves per unit of work (see the header).
constexpr uint64_t kMovesPerUnit = 8;
// Merge moves between two reads of the clock.
constexpr uint64_t kMovesPerClockRead = 1024;
// A step's reply bytes stop growing past this (a chunk of big elements stays one chunk).
constexpr size_t kSortChunkBytes = 1 << 20;

// A big SORT in progress (see the header).
class SlicedSort final : public SlicedRead {
 public:
  SlicedSort(SortRequest request, std::unique_ptr<storage::RangeRead> read, int64_t start,
             int64_t end)
      : request_(std::move(request)), read_(std::move(read)), start_(start), end_(end) {
    ordered_ = request_.type != storage::KeyType::kSet;
    if (request_.dontsort && ordered_) {  // the read is the window: all of it is replied
      start_ = 0;
      end_ = read_->total() - 1;
    }
    if (!request_.dontsort || ordered_) {
      items_.reserve(static_cast<size_t>(std::max<int64_t>(0, read_->total())));
    }
  }

  Status Step(const Settings& settings, std::string* out, bool* complete) override {
    using SteadyClock = std::chrono::steady_clock;
    const uint64_t step_work =
        std::max<uint64_t>(1, settings.slice_items.load(std::memory_order_relaxed));
    const auto deadline =
        SteadyClock::now() +
        std::chrono::microseconds(settings.slice_usec.load(std::memory_order_relaxed));
    const size_t out_start = out->size();
    *complete = false;
    uint64_t work = 0;
    while (phase_ != Phase::kDone && work < step_work) {
      Status s;
      switch (phase_) {
        case Phase::kLoad:
          s = LoadBatch(step_work - work, out, &work);
          break;
        case Phase::kRuns:
          SortRun(step_work, &work);
          break;
        case Phase::kMerge:
          Merge(step_work, deadline, &work);
          break;
        case Phase::kEmit:
          s = EmitBatch(step_work - work, out, &work);
          break;
        case Phase::kDone:
          break;
      }
      if (!s.ok()) {
        if (header_sent_) return s;  // the reply began: the caller closes the client
        AppendStatusError(out, s);   // nothing was sent: the error is the reply
        phase_ = Phase::kDone;
        break;
      }
      if (SteadyClock::now() >= deadline || out->size() - out_start >= kSortChunkBytes) break;
    }
    *complete = phase_ == Phase::kDone;
    return Status::OK();
  }

 private:
  enum class Phase { kLoad, kRuns, kMerge, kEmit, kDone };

  // Load: the next elements of the read, weighed (see the header).
  Status LoadBatch(uint64_t allowed, std::string* out, uint64_t* work) {
    batch_.clear();
    uint64_t emitted = 0;
    bool done = false;
    const uint64_t per_element = request_.by && !request_.dontsort ? 2 : 1;  // read + BY lookup
    const uint64_t n = std::max<uint64_t>(1, std::min(kLoadPerCall, allowed / per_element));
    if (Status s = read_->Next(n, &batch_, &emitted, &done); !s.ok()) return s;
    *work += n;
    const size_t first = items_.size();
    for (auto& item : batch_) {
      const int64_t position = loaded_++;
      // BY nosort over a set: only the window's positions are kept (the read stops after it).
      if (request_.dontsort && !ordered_ && position < start_) continue;
      if (request_.dontsort && !ordered_ && position > end_) break;
      items_.push_back(SortItem{std::move(item.key), 0, std::nullopt});
    }
    if (request_.dontsort && !ordered_ && loaded_ > end_) done = true;
    if (!request_.dontsort) {
      if (Status s = Weigh(first, work); !s.ok()) return s;
      if (not_double_) {
        AppendError(out, kSortNotDouble);
        phase_ = Phase::kDone;
        return Status::OK();
      }
    }
    if (done) EndLoad();
    return Status::OK();
  }

  // Weighs items_[first, end): BY lookups on the snapshot, numbers parsed.
  Status Weigh(size_t first, uint64_t* work) {
    const bool by = request_.by.has_value();
    std::vector<std::optional<std::string>> weights;
    if (by) {
      elements_.clear();
      for (size_t i = first; i < items_.size(); ++i) elements_.push_back(&items_[i].element);
      if (Status s = Lookup(*request_.by, &weights); !s.ok()) return s;
      *work += items_.size() - first;
    }
    for (size_t i = first; i < items_.size(); ++i) {
      SortItem& item = items_[i];
      if (by && !weights[i - first]) continue;  // missing: score 0, sorted first with ALPHA
      if (request_.alpha) {
        if (by) item.weight = std::move(weights[i - first]);
      } else if (!ParseSortWeight(by ? *weights[i - first] : item.element, &item.score)) {
        not_double_ = true;  // the unsliced code sorts then replies the error: the same reply
        return Status::OK();
      }
    }
    return Status::OK();
  }

  // The values `pattern` names for elements_, read on the snapshot.
  Status Lookup(const SortPattern& pattern, std::vector<std::optional<std::string>>* values) {
    values->assign(elements_.size(), std::nullopt);
    if (pattern.constant || elements_.empty()) return Status::OK();
    if (pattern.self) {
      for (size_t i = 0; i < elements_.size(); ++i) (*values)[i] = *elements_[i];
      return Status::OK();
    }
    keys_.clear();
    for (const std::string* element : elements_) keys_.push_back(pattern.KeyFor(*element));
    std::vector<std::string_view> views(keys_.begin(), keys_.end());
    return pattern.hash_field ? read_->GetHashField(views, pattern.field, values)
                              : read_->GetStrings(views, values);
  }

  void EndLoad() {
    const size_t n = items_.size();
    order_.resize(n);
    for (size_t i = 0; i < n; ++i) order_[i] = static_cast<uint32_t>(i);
    if (request_.dontsort) {
      if (request_.desc && ordered_) std::reverse(order_.begin(), order_.end());
      if (!ordered_) {  // a set: items_ holds the window alone
        end_ -= start_;
        start_ = 0;
      }
      phase_ = Phase::kEmit;
      return;
    }
    if (end_ < start_ || n < 2) {  // nothing to reply, or nothing to sort
      phase_ = Phase::kEmit;
      return;
    }
    phase_ = Phase::kRuns;
  }

  // The sort order: CompareSortItems, DESC applied, ties by input index (a stable sort).
  bool Less(uint32_t a, uint32_t b) const {
    int cmp = CompareSortItems(items_[a], items_[b], request_.alpha, request_.by.has_value(),
                               /*binary=*/false);
    if (request_.desc) cmp = -cmp;
    return cmp != 0 ? cmp < 0 : a < b;
  }

  // Sort: the next run of `step_work` elements.
  void SortRun(uint64_t step_work, uint64_t* work) {
    const size_t n = order_.size();
    // The width is fixed by the first run (`slice-items` may change between steps).
    if (run_ == 0) run_ = static_cast<size_t>(std::min<uint64_t>(step_work, n));
    const size_t to = std::min(n, run_from_ + run_);
    std::sort(order_.begin() + static_cast<std::ptrdiff_t>(run_from_),
              order_.begin() + static_cast<std::ptrdiff_t>(to),
              [this](uint32_t a, uint32_t b) { return Less(a, b); });
    *work += to - run_from_;
    run_from_ = to;
    if (run_from_ < n) return;
    width_ = run_;
    merged_.resize(n);
    phase_ = width_ >= n ? Phase::kEmit : Phase::kMerge;
  }

  // Sort: bottom-up merges of adjacent runs of width_ into merged_, resumable move by move.
  void Merge(uint64_t step_work, std::chrono::steady_clock::time_point deadline, uint64_t* work) {
    const size_t n = order_.size();
    const uint64_t allowed = (step_work - *work) * kMovesPerUnit;
    uint64_t moves = 0;
    bool stop = false;
    while (width_ < n && !stop) {
      const size_t mid = std::min(merge_lo_ + width_, n);
      const size_t hi = std::min(merge_lo_ + 2 * width_, n);
      if (!merging_) {
        left_ = merge_lo_;
        right_ = mid;
        to_ = merge_lo_;
        merging_ = true;
      }
      while (to_ < hi) {
        if (moves == allowed) {
          stop = true;
          break;
        }
        // Equal elements cannot occur (Less breaks ties by index); the left one first anyway.
        if (right_ >= hi || (left_ < mid && !Less(order_[right_], order_[left_]))) {
          merged_[to_++] = order_[left_++];
        } else {
          merged_[to_++] = order_[right_++];
        }
        if (++moves % kMovesPerClockRead == 0 && std::chrono::steady_clock::now() >= deadline) {
          stop = true;
          break;
        }
      }
      if (to_ < hi) break;
      merging_ = false;
      merge_lo_ = hi;
      if (merge_lo_ >= n) {  // a pass is done: runs twice as wide
        order_.swap(merged_);
        width_ *= 2;
        merge_lo_ = 0;
      }
    }
    *work += std::max<uint64_t>(1, moves / kMovesPerUnit);
    if (width_ >= n) {
      merged_ = {};
      phase_ = Phase::kEmit;
    }
  }

  // Reply: the header, then the next window elements (or their GET values).
  Status EmitBatch(uint64_t allowed, std::string* out, uint64_t* work) {
    const int64_t window = end_ - start_ + 1;
    if (!header_sent_) {
      const int64_t gets = static_cast<int64_t>(request_.gets.size());
      AppendArrayHeader(
          out, gets == 0 ? std::max<int64_t>(0, window) : gets * std::max<int64_t>(0, window));
      header_sent_ = true;
      next_ = start_;
    }
    if (next_ > end_) {
      phase_ = Phase::kDone;
      return Status::OK();
    }
    const uint64_t per_element = std::max<uint64_t>(1, request_.gets.size());
    const uint64_t n = std::min<uint64_t>({kEmitPerBatch, static_cast<uint64_t>(end_ - next_ + 1),
                                           std::max<uint64_t>(1, allowed / per_element)});
    const size_t from = static_cast<size_t>(next_), to = from + static_cast<size_t>(n);
    *work += n * per_element;
    if (request_.gets.empty()) {
      for (size_t i = from; i < to; ++i) AppendBulk(out, items_[order_[i]].element);
    } else {
      elements_.clear();
      for (size_t i = from; i < to; ++i) elements_.push_back(&items_[order_[i]].element);
      got_.resize(request_.gets.size());
      for (size_t g = 0; g < request_.gets.size(); ++g) {
        if (Status s = Lookup(request_.gets[g], &got_[g]); !s.ok()) return s;
      }
      for (size_t i = 0; i < n; ++i) {
        for (const auto& values : got_) AppendOptionalBulk(out, values[i]);
      }
    }
    next_ += static_cast<int64_t>(n);
    if (next_ > end_) phase_ = Phase::kDone;
    return Status::OK();
  }

  const SortRequest request_;
  std::unique_ptr<storage::RangeRead> read_;
  bool ordered_ = true;  // a list or sorted set (a set has no order of its own)
  int64_t start_, end_;  // the window in order_ (in load positions for BY nosort over a set)
  Phase phase_ = Phase::kLoad;
  bool not_double_ = false;
  std::vector<SortItem> items_;               // in input order
  std::vector<uint32_t> order_;               // indexes into items_, sorted in place
  std::vector<storage::RangeItem> batch_;     // one Next's items, reused
  std::vector<const std::string*> elements_;  // one Lookup's elements, reused
  std::vector<std::string> keys_;             // one Lookup's keys, reused
  std::vector<std::vector<std::optional<std::string>>> got_;  // one batch's GET values
  int64_t loaded_ = 0;                                        // load: elements read
  size_t run_ = 0;                                            // sort: the runs' width
  size_t run_from_ = 0;                                       // sort: where the next run starts
  std::vector<uint32_t> merged_;                              // merge: the pass being written
  size_t width_ = 0, merge_lo_ = 0;  // merge: run width, the pair being merged
  bool merging_ = false;
  size_t left_ = 0, right_ = 0, to_ = 0;  // merge: positions in the pair and in merged_
  bool header_sent_ = false;
  int64_t next_ = 0;  // reply: the next window position
};

}  // namespace

SortPattern::SortPattern(const std::string& p) {
  if (p == "#") {
    self = true;
    return;
  }
  size_t star = p.find('*');
  if (star == std::string::npos) {
    constant = true;
    return;
  }
  prefix = p.substr(0, star);
  size_t arrow = p.find("->", star + 1);
  if (arrow != std::string::npos && arrow + 2 < p.size()) {
    hash_field = true;
    field = p.substr(arrow + 2);
    suffix = p.substr(star + 1, arrow - star - 1);
  } else {
    suffix = p.substr(star + 1);
  }
}

int CompareSortItems(const SortItem& a, const SortItem& b, bool alpha, bool by_pattern,
                     bool binary) {
  if (!alpha) {
    return a.score > b.score ? 1 : a.score < b.score ? -1 : a.element.compare(b.element);
  }
  if (by_pattern) {
    if (!a.weight || !b.weight) {
      return (a.weight.has_value() == b.weight.has_value()) ? 0 : !a.weight ? -1 : 1;
    }
    return binary ? a.weight->compare(*b.weight) : strcoll(a.weight->c_str(), b.weight->c_str());
  }
  return binary ? a.element.compare(b.element) : strcoll(a.element.c_str(), b.element.c_str());
}

bool ParseSortWeight(const std::string& text, double* score) {
  errno = 0;
  char* end = nullptr;
  *score = std::strtod(text.c_str(), &end);
  return *end == '\0' && errno != ERANGE && !std::isnan(*score);
}

void SortWindow(int64_t len, int64_t limit_start, int64_t limit_count, int64_t* start,
                int64_t* end) {
  *start = std::min(std::max<int64_t>(limit_start, 0), len);
  const int64_t count = std::min(std::max<int64_t>(limit_count, -1), len);
  *end = count < 0 ? len - 1 : *start + count - 1;
  if (*start >= len) {
    *start = len - 1;
    *end = len - 2;
  }
  if (*end >= len) *end = len - 1;
}

bool ReplySort(CommandContext& ctx, const SortRequest& request, std::string* out) {
  if (ctx.slices == nullptr) return false;
  using storage::KeyType;
  using storage::RangeQuery;
  RangeQuery query;
  query.key = request.key;
  switch (request.type) {
    case KeyType::kList:
      query.kind = RangeQuery::Kind::kList;
      break;
    case KeyType::kSet:
      query.kind = RangeQuery::Kind::kSet;
      break;
    case KeyType::kZSet:
      query.kind = RangeQuery::Kind::kZSet;  // every member by rank
      break;
    default:
      return false;
  }
  auto opened = ctx.store->OpenRangeRead(query);
  if (!opened.ok()) {
    AppendStatusError(out, opened.status());
    return true;
  }
  std::unique_ptr<storage::RangeRead> read = std::move(*opened);
  const int64_t len = read->total();
  if (len < 0 || len >= std::numeric_limits<uint32_t>::max()) return false;
  int64_t start = 0, end = 0;
  SortWindow(len, request.limit_start, request.limit_count, &start, &end);
  const int64_t window = std::max<int64_t>(0, end - start + 1);
  const bool ordered = request.type != KeyType::kSet;
  // The unsliced code's work (see the header).
  uint64_t work = static_cast<uint64_t>(request.dontsort ? (ordered ? window : end + 1) : len);
  if (!request.dontsort && request.by) work += static_cast<uint64_t>(len);
  for (const SortPattern& get : request.gets) {
    if (!get.self && !get.constant) work += static_cast<uint64_t>(window);
  }
  const Settings& settings = ctx.settings();
  if (request.dontsort && window == 0) {  // nothing to reply, and no weight to check
    AppendArrayHeader(out, 0);
    return true;
  }
  if (work <= settings.slice_items.load(std::memory_order_relaxed)) return false;
  if (request.dontsort && ordered) {
    // Only the window's ranks (natural order, counted from the end with DESC), on a snapshot
    // of the same state: the key's lock is held since the first one was taken.
    const int64_t first = request.desc ? len - 1 - end : start;
    const int64_t last = request.desc ? len - 1 - start : end;
    if (query.kind == RangeQuery::Kind::kList) {
      query.start = first;
      query.stop = last;
    } else {
      query.zrange.start = first;
      query.zrange.stop = last;
    }
    read.reset();
    opened = ctx.store->OpenRangeRead(query);
    if (!opened.ok()) {
      AppendStatusError(out, opened.status());
      return true;
    }
    read = std::move(*opened);
  }
  auto sort = std::make_unique<SlicedSort>(request, std::move(read), start, end);
  const size_t reply_start = out->size();
  bool complete = false;
  Status s = sort->Step(settings, out, &complete);
  if (!s.ok()) {  // nothing of it was sent yet: reply the error instead
    out->resize(reply_start);
    AppendStatusError(out, s);
    return true;
  }
  if (ReplyOverBudget(ctx, *out)) return true;
  if (complete) return true;  // within one step after all: an ordinary command
  ctx.stats().sliced_commands.fetch_add(1, std::memory_order_relaxed);
  ctx.stats().command_slices.fetch_add(1, std::memory_order_relaxed);
  ctx.slices->deferred = std::move(sort);
  return true;
}

}  // namespace rockcache::server
