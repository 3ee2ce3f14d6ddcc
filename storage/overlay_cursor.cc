#include "storage/overlay_cursor.h"

#include "storage/encoding.h"
#include "storage/tx_overlay.h"

namespace rockcache::storage {

CollectionCursor::CollectionCursor(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* cf,
                                   std::string_view collection)
    : cf_id_(cf->GetID()), lo_(collection), hi_(PrefixSuccessor(collection)) {
  lo_slice_ = rocksdb::Slice(lo_);
  hi_slice_ = rocksdb::Slice(hi_);
  rocksdb::ReadOptions ro;
  ro.iterate_lower_bound = &lo_slice_;
  if (!hi_.empty()) ro.iterate_upper_bound = &hi_slice_;
  base_.reset(db->NewIterator(ro, cf));
}

void CollectionCursor::Forget() {
  dir_ = Dir::kNone;
  passed_.clear();
  passed_bytes_ = 0;
  replay_ = kNotReplaying;
}

void CollectionCursor::RealSeek(const rocksdb::Slice& target, Dir dir) {
  Forget();
  ++seeks_;
  if (dir == Dir::kForward) {
    base_->Seek(target);
  } else {
    base_->SeekForPrev(target);
  }
  origin_.assign(target.data(), target.size());
  dir_ = dir;
}

void CollectionCursor::Materialize() {
  if (replay_ >= passed_.size()) return;
  const std::string key = passed_[replay_].key;
  Forget();  // the memory described base_'s old position
  ++seeks_;
  base_->Seek(key);  // a key of the database: Seek and SeekForPrev land on it alike
}

bool CollectionCursor::Reuse(const rocksdb::Slice& target, Dir dir, const TxOverlay& tx) {
  if (dir_ != dir || !base_->status().ok()) return false;
  const bool fwd = dir == Dir::kForward;
  // `a` comes before `b` in the direction of travel.
  auto before = [fwd](const rocksdb::Slice& a, const rocksdb::Slice& b) {
    return fwd ? a.compare(b) < 0 : a.compare(b) > 0;
  };
  if (before(target, origin_)) return false;
  if (!base_->Valid() || !before(base_->key(), target)) {
    // origin <= target <= here: replay the passed entries from the first one at or past the
    // target that the overlay does not decide.
    size_t first = 0;
    while (first < passed_.size() && before(passed_[first].key, target)) ++first;
    while (first < passed_.size() && tx.Find(cf_id_, passed_[first].key) != nullptr) ++first;
    for (size_t i = first; i < passed_.size(); ++i) {
      if (!passed_[i].has_value && tx.Find(cf_id_, passed_[i].key) == nullptr) return false;
    }
    for (size_t i = 0; i < first; ++i) passed_bytes_ -= passed_[i].value.size();
    passed_.erase(passed_.begin(), passed_.begin() + static_cast<std::ptrdiff_t>(first));
    replay_ = passed_.empty() ? kNotReplaying : 0;
    origin_.assign(target.data(), target.size());
    ++reused_;
    return true;
  }
  // A little ahead: step (the keys stepped over, and those passed before, are before the target,
  // so they do not matter).
  passed_.clear();
  passed_bytes_ = 0;
  replay_ = kNotReplaying;
  for (int i = 0; i < kMaxSteps && base_->Valid() && before(base_->key(), target); ++i) {
    fwd ? base_->Next() : base_->Prev();
  }
  if (!base_->status().ok() || (base_->Valid() && before(base_->key(), target))) return false;
  origin_.assign(target.data(), target.size());
  ++reused_;
  return true;
}

void CollectionCursor::SeekForward(const rocksdb::Slice& target, const TxOverlay& tx) {
  if (!Reuse(target, Dir::kForward, tx)) RealSeek(target, Dir::kForward);
}

void CollectionCursor::SeekBackward(const rocksdb::Slice& target, const TxOverlay& tx) {
  if (!Reuse(target, Dir::kBackward, tx)) RealSeek(target, Dir::kBackward);
}

void CollectionCursor::SeekToLastOfFamily() {
  Forget();
  base_->SeekToLast();
}

void CollectionCursor::Step(Dir dir) {
  if (dir_ == dir && replay_ < passed_.size()) {  // replaying: the entry is remembered already
    if (++replay_ == passed_.size()) replay_ = kNotReplaying;
    return;
  }
  if (dir_ != dir) {  // turning round (or no memory): the memory is of the other side
    Materialize();
    Forget();
  } else if (base_->Valid()) {
    if (passed_.size() < kMaxPassed) {
      Passed& p = passed_.emplace_back();
      const rocksdb::Slice k = base_->key(), v = base_->value();
      p.key.assign(k.data(), k.size());
      if (v.size() <= kMaxValueBytes && passed_bytes_ + v.size() <= kMaxPassedBytes) {
        p.value.assign(v.data(), v.size());
        p.has_value = true;
        passed_bytes_ += v.size();
      }
    } else {
      Forget();
    }
  }
  if (dir == Dir::kForward) {
    base_->Next();
  } else {
    base_->Prev();
  }
}

// One read's view of a cursor: the cursor's iterator narrowed to [lo, hi).
class CursorLease final : public rocksdb::Iterator {
 public:
  CursorLease(CollectionCursor* cursor, const TxOverlay* tx, const rocksdb::Slice* lo,
              const rocksdb::Slice* hi)
      : cursor_(cursor), tx_(tx) {
    lo_ = lo != nullptr ? std::string(lo->data(), lo->size()) : cursor->lo_;
    hi_ = hi != nullptr ? std::string(hi->data(), hi->size()) : cursor->hi_;
    cursor_->leased_ = true;
  }
  ~CursorLease() override { cursor_->leased_ = false; }

  bool Valid() const override { return valid_; }
  void SeekToFirst() override { Seek(lo_); }
  void SeekToLast() override {
    if (hi_.empty()) {  // the collection's end is the column family's: no key to seek before
      cursor_->SeekToLastOfFamily();
    } else {
      cursor_->SeekBackward(hi_, *tx_);
      if (cursor_->Valid() && cursor_->key().compare(hi_) >= 0) cursor_->Prev();
    }
    Check();
  }
  void Seek(const rocksdb::Slice& target) override {
    const rocksdb::Slice t = target.compare(lo_) < 0 ? rocksdb::Slice(lo_) : target;
    cursor_->SeekForward(t, *tx_);
    Check();
  }
  void SeekForPrev(const rocksdb::Slice& target) override {
    if (!hi_.empty() && target.compare(hi_) >= 0) return SeekToLast();
    cursor_->SeekBackward(target, *tx_);
    Check();
  }
  void Next() override {
    cursor_->Next();
    Check();
  }
  void Prev() override {
    cursor_->Prev();
    Check();
  }
  rocksdb::Slice key() const override { return cursor_->key(); }
  rocksdb::Slice value() const override { return cursor_->value(); }
  rocksdb::Status status() const override { return cursor_->status(); }

 private:
  void Check() {
    valid_ = cursor_->Valid() && cursor_->key().compare(lo_) >= 0 &&
             (hi_.empty() || cursor_->key().compare(hi_) < 0);
  }

  CollectionCursor* const cursor_;
  const TxOverlay* const tx_;
  std::string lo_, hi_;
  bool valid_ = false;
};

std::unique_ptr<rocksdb::Iterator> CollectionCursor::NewLease(const TxOverlay* tx,
                                                              const rocksdb::Slice* lo,
                                                              const rocksdb::Slice* hi) {
  return std::make_unique<CursorLease>(this, tx, lo, hi);
}

TxOverlay::~TxOverlay() = default;

CollectionCursor* TxOverlay::Cursor(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* cf,
                                    std::string_view collection) {
  const uint32_t id = cf->GetID();
  std::unique_ptr<CollectionCursor>* spare = nullptr;
  for (auto& c : cursors_) {
    if (c->cf_id() == id && c->collection() == collection) return c.get();
    if (spare == nullptr && !c->leased()) spare = &c;
  }
  if (cursors_.size() < kMaxCursors) {
    return cursors_.emplace_back(std::make_unique<CollectionCursor>(db, cf, collection)).get();
  }
  if (spare == nullptr) return nullptr;
  spare->reset(new CollectionCursor(db, cf, collection));
  return spare->get();
}

}  // namespace rockcache::storage
