// RocksStore: sliced reads (RangeRead, range_read.h). One RocksDB snapshot per read; each step
// opens an iterator on it, seeks to where the previous step stopped (the last sub-key visited, or
// the list offset) and walks at most `max_visits` entries. Re-seeking costs one seek per step (a
// step is ~1 ms of work); in exchange no RocksDB iterator (and no lifecycle hold) lives across
// steps, so nothing thread-bound is carried from one worker to the next.
//
// Bounded work on drained collections: every walk is bounded by the meta's live-range hint
// (HintOf, the same bounds the unsliced reads use), so tombstones left by pops are not walked.
#include "config/glob.h"
#include "storage/rocks_store.h"
#include "storage/zset_bounds.h"

namespace rockcache::storage {

class RocksRangeRead final : public RangeRead {
 public:
  RocksRangeRead(RocksStore* store, const RangeQuery& query)
      : store_(store), db_(CurrentDb()), query_(query), now_(NowMs()) {}
  ~RocksRangeRead() override {
    if (snap_ != nullptr) store_->db_->ReleaseSnapshot(snap_);
  }

  // Reads the meta in the snapshot and works out the range. WrongType when the key holds another
  // type.
  Status Open() {
    RocksStore::Hold hold;
    if (Status s = store_->Enter(&hold); !s.ok()) return s;
    snap_ = store_->db_->GetSnapshot();
    ro_.snapshot = snap_;
    if (query_.kind == RangeQuery::Kind::kKeys) {
      prefix_ = GlobLiteralPrefix(query_.pattern);
      match_all_ = query_.pattern == "*";
      total_ = -1;
      return Status::OK();
    }
    MetaType type = MetaType::kHash;
    switch (query_.kind) {
      case RangeQuery::Kind::kSet:
        type = MetaType::kSet;
        break;
      case RangeQuery::Kind::kList:
        type = MetaType::kList;
        break;
      case RangeQuery::Kind::kZSet:
        type = MetaType::kZSet;
        break;
      default:
        break;
    }
    if (Status s = store_->LoadForRead(ro_, query_.key, type, &meta_, &found_); !s.ok()) return s;
    if (!found_) {
      total_ = 0;
      return Status::OK();
    }
    const ZRangeSpec& z = query_.zrange;
    switch (query_.kind) {
      case RangeQuery::Kind::kHash:
      case RangeQuery::Kind::kSet:
        total_ = static_cast<int64_t>(meta_.count);
        break;
      case RangeQuery::Kind::kList:
        Normalize(query_.start, query_.stop, &begin_, &end_);
        total_ = static_cast<int64_t>(end_ - begin_);
        break;
      case RangeQuery::Kind::kZSet:
        if (z.by == ZRangeSpec::By::kRank) {
          Normalize(z.start, z.stop, &begin_, &end_);
          total_ = static_cast<int64_t>(end_ - begin_);
        } else {
          total_ = z.offset < 0 ? 0 : -1;
        }
        break;
      case RangeQuery::Kind::kKeys:
        break;
    }
    Restart();
    return Status::OK();
  }

  int64_t total() const override { return total_; }

  void Restart() override {
    last_.reset();
    position_ = 0;
    skip_ = query_.zrange.offset;
    left_ = query_.zrange.limit;
    done_ = total_ == 0;
  }

  Status Lookup(const std::vector<std::string_view>& members,
                std::vector<std::optional<double>>* scores) override {
    const bool set = query_.kind == RangeQuery::Kind::kSet;
    if (!set && query_.kind != RangeQuery::Kind::kZSet) {
      return Status::InvalidArgument("Lookup on a read of neither a set nor a sorted set");
    }
    scores->assign(members.size(), std::nullopt);
    if (!found_) return Status::OK();
    RocksStore::Hold hold;
    if (Status s = store_->Enter(&hold); !s.ok()) return s;
    DbScope scope(db_);
    std::string ignored;
    for (size_t i = 0; i < members.size(); ++i) {
      if (!set) {
        if (Status s = store_->GetZScore(ro_, query_.key, meta_.version, members[i], &(*scores)[i]);
            !s.ok()) {
          return s;
        }
        continue;
      }
      bool has = false;
      if (Status s = store_->GetEntry(ro_, store_->set_cf_, query_.key, meta_.version, members[i],
                                      &ignored, &has);
          !s.ok()) {
        return s;
      }
      if (has) (*scores)[i] = 1.0;
    }
    return Status::OK();
  }

  Status GetStrings(const std::vector<std::string_view>& keys,
                    std::vector<std::optional<std::string>>* values) override {
    values->assign(keys.size(), std::nullopt);
    if (keys.empty()) return Status::OK();
    RocksStore::Hold hold;
    if (Status s = store_->Enter(&hold); !s.ok()) return s;
    DbScope scope(db_);
    std::vector<rocksdb::PinnableSlice> metas(keys.size());
    if (Status s = MultiGet(store_->MetaCf(), keys, &metas); !s.ok()) return s;
    for (size_t i = 0; i < keys.size(); ++i) {
      if (!hits_[i]) continue;
      Meta meta;
      if (!DecodeMeta(std::string_view(metas[i].data(), metas[i].size()), &meta)) {
        return Status::Corruption("undecodable meta record");
      }
      if (meta.type == MetaType::kString && !meta.ExpiredAt(now_))
        (*values)[i] = std::move(meta.value);
    }
    return Status::OK();
  }

  Status GetHashField(const std::vector<std::string_view>& keys, std::string_view field,
                      std::vector<std::optional<std::string>>* values) override {
    values->assign(keys.size(), std::nullopt);
    if (keys.empty()) return Status::OK();
    RocksStore::Hold hold;
    if (Status s = store_->Enter(&hold); !s.ok()) return s;
    DbScope scope(db_);
    std::vector<rocksdb::PinnableSlice> metas(keys.size());
    if (Status s = MultiGet(store_->MetaCf(), keys, &metas); !s.ok()) return s;
    // The live hashes' data keys, read with a second batched lookup.
    std::vector<std::string> data_keys;
    std::vector<size_t> owners;
    for (size_t i = 0; i < keys.size(); ++i) {
      if (!hits_[i]) continue;
      Meta meta;
      if (!DecodeMetaHeader(std::string_view(metas[i].data(), metas[i].size()), &meta)) {
        return Status::Corruption("undecodable meta record");
      }
      if (meta.type != MetaType::kHash || meta.ExpiredAt(now_)) continue;
      data_keys.push_back(DataKey(keys[i], meta.version, field));
      owners.push_back(i);
    }
    if (data_keys.empty()) return Status::OK();
    std::vector<std::string_view> views(data_keys.begin(), data_keys.end());
    std::vector<rocksdb::PinnableSlice> fields(views.size());
    if (Status s = MultiGet(store_->hash_cf_, views, &fields); !s.ok()) return s;
    for (size_t j = 0; j < views.size(); ++j) {
      if (hits_[j]) (*values)[owners[j]] = fields[j].ToString();
    }
    return Status::OK();
  }

  Status Next(uint64_t max_visits, std::vector<RangeItem>* out, uint64_t* emitted,
              bool* done) override {
    if (out == nullptr) return Step(max_visits, nullptr, emitted, done);
    const ItemVisitor collect = [out](std::string_view key, std::string_view value, double score) {
      RangeItem& item = out->emplace_back();
      item.key.assign(key.data(), key.size());
      item.value.assign(value.data(), value.size());
      item.score = score;
      return true;
    };
    return Step(max_visits, &collect, emitted, done);
  }

  Status Visit(uint64_t max_visits, const ItemVisitor& visit, uint64_t* emitted,
               bool* done) override {
    return Step(max_visits, &visit, emitted, done);
  }

 private:
  // Next and Visit: `visit` sees the items (nullptr: only counted).
  Status Step(uint64_t max_visits, const ItemVisitor* visit, uint64_t* emitted, bool* done) {
    if (max_visits == 0) max_visits = 1;
    if (done_) {
      *done = true;
      return Status::OK();
    }
    RocksStore::Hold hold;
    if (Status s = store_->Enter(&hold); !s.ok()) return s;
    DbScope scope(db_);  // the step may run on another worker than OpenRangeRead did
    visit_ = visit;
    paused_ = false;
    Status s;
    switch (query_.kind) {
      case RangeQuery::Kind::kHash:
      case RangeQuery::Kind::kSet:
        s = StepEntries(max_visits, emitted);
        break;
      case RangeQuery::Kind::kList:
        s = StepList(max_visits, emitted);
        break;
      case RangeQuery::Kind::kZSet:
        s = StepZSet(max_visits, emitted);
        break;
      case RangeQuery::Kind::kKeys:
        s = StepKeys(max_visits, emitted);
        break;
    }
    visit_ = nullptr;
    *done = done_;
    // A read that takes more than one step is a scan: its later steps read blocks without
    // filling the block cache, so a KEYS * or a big HGETALL does not evict the index, filter and
    // data blocks that point reads (cache misses, writes' meta reads) of other clients need.
    ro_.fill_cache = false;
    return s;
  }

  // LRANGE's (and ZRANGE by rank's) index rules: [*begin, *end) offsets, empty when none.
  void Normalize(int64_t start, int64_t stop, uint64_t* begin, uint64_t* end) const {
    const auto n = static_cast<int64_t>(meta_.count);
    if (start < 0) start = n + start;
    if (stop < 0) stop = n + stop;
    if (start < 0) start = 0;
    if (start > stop || start >= n) {
      *begin = *end = 0;
      return;
    }
    if (stop >= n) stop = n - 1;
    *begin = static_cast<uint64_t>(start);
    *end = static_cast<uint64_t>(stop) + 1;
  }

  // Walks `cf` from where the previous step stopped (skipping that entry itself); `visit` sees
  // each entry and returns false to end the read. Stops after max_visits entries; the read is
  // done when the walk ran out of entries or `visit` ended it.
  template <typename Visit>
  Status Walk(rocksdb::ColumnFamilyHandle* cf, const EntryBounds& bounds, bool reverse,
              std::optional<std::string> first, uint64_t max_visits, Visit visit) {
    uint64_t visits = 0;
    bool paused = false, ended = false;
    std::optional<std::string_view> from;
    if (last_) {
      from = *last_;
    } else if (first) {
      from = *first;
    }
    std::string last;
    Status s = store_->ForEachEntry(
        ro_, cf, query_.key, meta_.version,
        [&](std::string_view sub, std::string_view value) {
          if (last_ && sub == *last_) return true;  // where the previous step stopped
          if (visits == max_visits) {
            paused = true;
            return false;
          }
          ++visits;
          last.assign(sub.data(), sub.size());
          if (!visit(sub, value)) {
            ended = true;
            return false;
          }
          if (paused_) {  // the caller ends the call after this item
            paused = true;
            return false;
          }
          return true;
        },
        from, reverse, bounds);
    if (!s.ok()) return s;
    if (visits > 0) last_ = std::move(last);
    if (!paused || ended) done_ = true;
    return Status::OK();
  }

  // One batched point read of `keys` in `cf` on the snapshot: *values[i] and hits_[i]
  // (whether keys[i] was found). REQUIRES: the lifecycle hold and the read's database.
  Status MultiGet(rocksdb::ColumnFamilyHandle* cf, const std::vector<std::string_view>& keys,
                  std::vector<rocksdb::PinnableSlice>* values) {
    std::vector<rocksdb::Slice> slices;
    slices.reserve(keys.size());
    for (auto k : keys) slices.emplace_back(k.data(), k.size());
    std::vector<rocksdb::Status> statuses(keys.size());
    store_->DbMultiGet(ro_, cf, keys.size(), slices.data(), values->data(), statuses.data());
    hits_.assign(keys.size(), false);
    for (size_t i = 0; i < keys.size(); ++i) {
      if (statuses[i].IsNotFound()) continue;
      if (!statuses[i].ok()) return FromRocks(statuses[i]);
      hits_[i] = true;
    }
    return Status::OK();
  }

  // One item of the read: to the call's visitor, which may end the call after it (paused_).
  void Emit(uint64_t* emitted, std::string_view key, std::string_view value, double score) {
    ++*emitted;
    if (visit_ != nullptr && !(*visit_)(key, value, score)) paused_ = true;
  }

  Status StepEntries(uint64_t max_visits, uint64_t* emitted) {
    const bool hash = query_.kind == RangeQuery::Kind::kHash;
    return Walk(hash ? store_->hash_cf_ : store_->set_cf_, RocksStore::HintOf(meta_), false,
                std::nullopt, max_visits, [&](std::string_view sub, std::string_view value) {
                  Emit(emitted, sub, hash ? value : std::string_view(), 0);
                  return true;
                });
  }

  // The elements at offsets [from, to) have no holes: the iterator is bounded to exactly them
  // (so it never steps over an entry outside the range), and each entry it yields is an item.
  Status StepList(uint64_t max_visits, uint64_t* emitted) {
    const uint64_t from = begin_ + position_;
    const uint64_t to = std::min<uint64_t>(end_, from + max_visits);
    const std::string lo = EncodeListIndex(meta_.head + from);
    const std::string hi = EncodeListIndex(meta_.head + to);
    uint64_t read = 0;
    Status s = store_->ForEachEntry(
        ro_, store_->list_cf_, query_.key, meta_.version,
        [&](std::string_view, std::string_view element) {
          ++read;
          Emit(emitted, element, {}, 0);
          return !paused_ && read < to - from;  // no Next past the last element
        },
        std::nullopt, false,
        EntryBounds{lo, std::optional<std::string_view>(hi), std::nullopt, {}});
    if (!s.ok()) return s;
    if (read != to - from && !paused_) return Status::Corruption("list shorter than its meta");
    position_ += read;
    if (begin_ + position_ >= end_) done_ = true;
    return Status::OK();
  }

  // As RocksStore::VisitZRange, resumable: position_ counts the entries of the score index
  // walked so far (the rank), skip_/left_ what LIMIT still skips and allows.
  Status StepZSet(uint64_t max_visits, uint64_t* emitted) {
    const ZRangeSpec& z = query_.zrange;
    const bool rev = z.reverse;
    auto emit_limited = [&](std::string_view member, double score) {
      if (skip_ > 0) {
        --skip_;
        return true;
      }
      if (left_ == 0) return false;
      if (left_ > 0) --left_;
      Emit(emitted, member, {}, score);
      return left_ != 0;
    };
    if (z.by == ZRangeSpec::By::kRank) {
      return Walk(store_->zscore_cf_, RocksStore::HintOf(meta_), rev, std::nullopt, max_visits,
                  [&](std::string_view sub, std::string_view) {
                    const uint64_t rank = position_++;
                    if (rank >= end_) return false;
                    if (rank < begin_ || sub.size() < 8) return true;
                    Emit(emitted, sub.substr(8), {}, DecodeScore(sub.data()));
                    return rank + 1 < end_;
                  });
    }
    if (z.by == ZRangeSpec::By::kScore) {
      const ScoreRange& r = z.score;
      std::string first = rev ? PrefixSuccessor(EncodeScore(r.max)) : EncodeScore(r.min);
      return Walk(store_->zscore_cf_, RocksStore::HintOf(meta_), rev, first, max_visits,
                  [&](std::string_view sub, std::string_view) {
                    if (sub.size() < 8) return true;
                    double score = DecodeScore(sub.data());
                    if (rev ? !LteMax(score, r) : !GteMin(score, r)) return true;
                    if (rev ? !GteMin(score, r) : !LteMax(score, r)) return false;
                    return emit_limited(sub.substr(8), score);
                  });
    }
    const LexRange& r = z.lex;
    const LexBound& start = rev ? r.max : r.min;
    if (start.kind == (rev ? LexBound::Kind::kNegInf : LexBound::Kind::kPosInf)) {
      done_ = true;  // nothing is beyond the far end
      return Status::OK();
    }
    std::optional<std::string> first;
    if (start.kind == LexBound::Kind::kInclusive || start.kind == LexBound::Kind::kExclusive) {
      first = start.value;
    }
    return Walk(store_->zset_cf_, EntryBounds{}, rev, first, max_visits,
                [&](std::string_view member, std::string_view value) {
                  if (rev ? !LteMax(member, r.max) : !GteMin(member, r.min)) return true;
                  if (rev ? !GteMin(member, r.min) : !LteMax(member, r.max)) return false;
                  if (value.size() != 8) return true;
                  return emit_limited(member, DecodeScore(value.data()));
                });
  }

  Status StepKeys(uint64_t max_visits, uint64_t* emitted) {
    std::unique_ptr<rocksdb::Iterator> it(store_->db_->NewIterator(ro_, store_->MetaCf()));
    it->Seek(last_ ? *last_ : prefix_);
    uint64_t visits = 0;
    for (; it->Valid(); it->Next()) {
      std::string_view key(it->key().data(), it->key().size());
      if (key.substr(0, prefix_.size()) != prefix_) break;
      if (last_ && key == *last_) continue;
      if (visits == max_visits) return FromRocks(it->status());  // paused
      ++visits;
      last_ = std::string(key);
      Meta meta;
      if (!DecodeMetaHeader(std::string_view(it->value().data(), it->value().size()), &meta)) {
        continue;
      }
      if (meta.ExpiredAt(now_)) continue;
      if (!match_all_ && !GlobMatch(query_.pattern, key)) continue;
      Emit(emitted, key, {}, 0);
      if (paused_) return FromRocks(it->status());  // resumes after last_
    }
    done_ = true;
    return FromRocks(it->status());
  }

  RocksStore* const store_;
  const int db_;  // physical database of the caller of OpenRangeRead
  const RangeQuery query_;
  const rocksdb::Snapshot* snap_ = nullptr;
  const int64_t now_;  // expiry is judged at the read's start, as by a single read
  rocksdb::ReadOptions ro_;
  Meta meta_;
  bool found_ = false;
  int64_t total_ = -1;
  uint64_t begin_ = 0, end_ = 0;  // kList, kZSet by rank: the offsets selected
  std::string prefix_;            // kKeys
  bool match_all_ = false;        // kKeys
  // Position.
  std::optional<std::string> last_;  // the last sub-key (kKeys: key) visited
  uint64_t position_ = 0;            // kList: elements read; kZSet by rank: entries walked
  int64_t skip_ = 0, left_ = -1;     // kZSet by score / lex: LIMIT's offset and count left
  bool done_ = false;
  // The current call's visitor (nullptr: counting), and whether it ended the call.
  const ItemVisitor* visit_ = nullptr;
  bool paused_ = false;
  std::vector<bool> hits_;  // the last MultiGet's hits, reused
};

StatusOr<std::unique_ptr<RangeRead>> RocksStore::OpenRangeRead(const RangeQuery& query) {
  // The snapshot must hold what this thread's reads see: in an indexed group, writes of the
  // same key earlier in the group are only in the overlay until written.
  if (Status s = FlushIndexedGroup(); !s.ok()) return s;
  auto read = std::make_unique<RocksRangeRead>(this, query);
  if (Status s = read->Open(); !s.ok()) return s;
  return std::unique_ptr<RangeRead>(std::move(read));
}

}  // namespace rockcache::storage
