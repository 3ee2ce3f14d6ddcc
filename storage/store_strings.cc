// RocksStore: string commands. A string lives entirely in its meta record (value inline).
#include <algorithm>
#include <cassert>
#include <cmath>

#include "storage/no_wait_files.h"
#include "storage/numbers.h"
#include "storage/perf_counters.h"
#include "storage/rocks_store.h"

namespace rockcache::storage {

namespace {

// Redis's proto-max-bulk-len default: the largest string APPEND may build.
constexpr uint64_t kMaxStringBytes = 512ull << 20;

const char kErrNotInteger[] = "value is not an integer or out of range";
const char kErrStringTooBig[] = "string exceeds maximum allowed size (proto-max-bulk-len)";

// The TTL a write that keeps the TTL carries forward.
int64_t KeptExpiry(const MetaLookup& old) { return old.live ? old.meta.expire_at_ms : 0; }

}  // namespace

StatusOr<std::optional<std::string>> RocksStore::Get(std::string_view key, int64_t* expire_at_ms) {
  Hold hold;
  if (Status s = Enter(&hold); !s.ok()) return s;
  // ReadString's steps, with the value moved out of the lookup rather than copied (a GET's value
  // is read once, here).
  MetaLookup lookup;
  if (Status s = ReadMeta(rocksdb::ReadOptions(), key, &lookup); !s.ok()) return s;
  if (expire_at_ms != nullptr) *expire_at_ms = lookup.live ? lookup.meta.expire_at_ms : 0;
  if (!lookup.live) return std::optional<std::string>();
  if (lookup.meta.type != MetaType::kString) return Status::WrongType();
  return std::optional<std::string>(std::move(lookup.meta.value));
}

MemoryRead RocksStore::TryGetString(std::string_view key, size_t max_value_bytes,
                                    MemoryReach reach) {
  MemoryRead read;  // kNeedsStorage
  QuietPerfCounting();
  Hold hold(lifecycle_, std::try_to_lock);
  if (!hold.owns_lock()) return read;
  lifecycle_.AssertReaderHeld();
  if (closed_) return read;
  assert(tls_tx_overlay == nullptr);
  if (!key_filter_->MayContain(CurrentDb(), key)) {  // never written: no RocksDB read
    read.outcome = MemoryRead::Outcome::kAbsent;
    return read;
  }
  rocksdb::ReadOptions ro;
  rocksdb::PinnableSlice bytes;
  rocksdb::Status s;
  if (no_wait_reads_ && reach == MemoryReach::kResidentFiles) {
    // A block in a file is read only if its pages are in memory (Busy otherwise).
    NoWaitReads no_wait;
    s = DbGet(ro, MetaCf(), rocksdb::Slice(key.data(), key.size()), &bytes);
  } else {
    ro.read_tier = rocksdb::kBlockCacheTier;  // Incomplete instead of a file read
    s = DbGet(ro, MetaCf(), rocksdb::Slice(key.data(), key.size()), &bytes);
  }
  if (s.IsNotFound()) {
    read.outcome = MemoryRead::Outcome::kAbsent;
    return read;
  }
  if (!s.ok()) return read;
  std::string_view record(bytes.data(), bytes.size());
  Meta meta;
  if (!DecodeMetaHeader(record, &meta)) return read;  // the pool's read reports the corruption
  if (meta.ExpiredAt(NowMs())) {
    ReportExpired(key);
    read.outcome = MemoryRead::Outcome::kAbsent;
    return read;
  }
  if (meta.type != MetaType::kString) {
    read.outcome = MemoryRead::Outcome::kOtherType;
    return read;
  }
  // The record is the header plus the value: a bound on the value's size before copying it.
  constexpr size_t kMaxHeaderBytes = 64;
  if (record.size() > max_value_bytes + kMaxHeaderBytes || !DecodeMeta(record, &meta) ||
      meta.value.size() > max_value_bytes) {
    return read;
  }
  read.outcome = MemoryRead::Outcome::kString;
  read.value = std::move(meta.value);
  read.expire_at_ms = meta.expire_at_ms;
  return read;
}

StatusOr<SetResult> RocksStore::Set(std::string_view key, std::string_view value,
                                    const SetOptions& options) {
  Hold hold;
  if (options.known_present && options.condition == SetOptions::Condition::kAlways &&
      !options.return_old && options.expiry.mode != Expiry::Mode::kKeep) {
    if (Status s = Enter(&hold); !s.ok()) return s;
    return BlindSet(key, value, options.expiry, options.known_expire_at_ms);
  }
  MetaLookup old;
  if (Status s = Enter(&hold); !s.ok()) return s;
  // The old string value is copied out only when SET ... GET returns it.
  if (Status s = ReadMeta(rocksdb::ReadOptions(), key, &old, /*full=*/options.return_old);
      !s.ok()) {
    return s;
  }
  SetResult result;
  if (options.return_old && old.live) {
    if (old.meta.type != MetaType::kString) return Status::WrongType();
    result.old_value = old.meta.value;
  }
  if ((options.condition == SetOptions::Condition::kIfAbsent && old.live) ||
      (options.condition == SetOptions::Condition::kIfPresent && !old.live)) {
    return result;
  }
  int64_t expire_at = 0;
  switch (options.expiry.mode) {
    case Expiry::Mode::kClear:
      break;
    case Expiry::Mode::kKeep:
      expire_at = KeptExpiry(old);
      break;
    case Expiry::Mode::kAt:
      expire_at = options.expiry.at_ms;
      if (expire_at <= NowMs()) {
        // Written and expired at once: the key is gone.
        if (old.present) {
          if (Status s = DeleteKey(key, old); !s.ok()) return s;
        }
        result.written = true;
        return result;
      }
      break;
  }
  if (Status s = WriteString(key, old, value, expire_at); !s.ok()) return s;
  result.written = true;
  return result;
}

StatusOr<SetResult> RocksStore::BlindSet(std::string_view key, std::string_view value,
                                         const Expiry& expiry, int64_t old_expire_at_ms) {
  // The key is known present: an overwrite never changes the key count, a delete lowers it.
  MetaLookup present;
  present.present = true;
  present.meta.expire_at_ms = old_expire_at_ms;  // for the expires= counters
  SetResult result;
  result.written = true;
  if (expiry.mode == Expiry::Mode::kAt && expiry.at_ms <= NowMs()) {
    if (Status s = DeleteKey(key, present); !s.ok()) return s;
    return result;
  }
  // Not `live` with type string as far as WriteString knows: it takes a fresh version, which is
  // right whatever the old type was.
  const int64_t expire_at = expiry.mode == Expiry::Mode::kAt ? expiry.at_ms : 0;
  if (Status s = WriteString(key, present, value, expire_at); !s.ok()) return s;
  return result;
}

void RocksStore::MultiGetMetas(const std::vector<std::string_view>& keys,
                               rocksdb::PinnableSlice* values, rocksdb::Status* statuses) {
  const int db = CurrentDb();
  std::vector<rocksdb::Slice> slices;
  std::vector<size_t> probed;  // the keys the filter does not rule out
  slices.reserve(keys.size());
  probed.reserve(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    statuses[i] = rocksdb::Status::NotFound();
    if (!key_filter_->MayContain(db, keys[i])) continue;
    slices.emplace_back(keys[i].data(), keys[i].size());
    probed.push_back(i);
  }
  if (probed.empty()) return;
  if (probed.size() == keys.size()) {
    DbMultiGet(rocksdb::ReadOptions(), MetaCf(), keys.size(), slices.data(), values, statuses);
    return;
  }
  std::vector<rocksdb::PinnableSlice> found(probed.size());
  std::vector<rocksdb::Status> found_statuses(probed.size());
  DbMultiGet(rocksdb::ReadOptions(), MetaCf(), probed.size(), slices.data(), found.data(),
             found_statuses.data());
  for (size_t j = 0; j < probed.size(); ++j) {
    values[probed[j]] = std::move(found[j]);
    statuses[probed[j]] = found_statuses[j];
  }
}

StatusOr<std::vector<std::optional<std::string>>> RocksStore::MGet(
    const std::vector<std::string_view>& keys, std::vector<int64_t>* expire_at_ms) {
  Hold hold;
  if (Status s = Enter(&hold); !s.ok()) return s;
  std::vector<std::optional<std::string>> out(keys.size());
  if (expire_at_ms != nullptr) expire_at_ms->assign(keys.size(), 0);
  if (keys.empty()) return out;
  std::vector<rocksdb::PinnableSlice> values(keys.size());
  std::vector<rocksdb::Status> statuses(keys.size());
  MultiGetMetas(keys, values.data(), statuses.data());
  int64_t now = NowMs();
  for (size_t i = 0; i < keys.size(); ++i) {
    if (statuses[i].IsNotFound()) continue;
    if (!statuses[i].ok()) return FromRocks(statuses[i]);
    Meta meta;
    if (!DecodeMeta(std::string_view(values[i].data(), values[i].size()), &meta)) {
      return Status::Corruption("undecodable meta record");
    }
    if (meta.type == MetaType::kString && !meta.ExpiredAt(now)) {
      out[i] = std::move(meta.value);
      if (expire_at_ms != nullptr) (*expire_at_ms)[i] = meta.expire_at_ms;
    }
  }
  return out;
}

namespace {

// The index in `kvs` of the last pair of each distinct key, in key order. Sorts indexes rather
// than filling a node-based map: no allocation per key.
std::vector<uint32_t> LastWins(
    const std::vector<std::pair<std::string_view, std::string_view>>& kvs) {
  std::vector<uint32_t> order(kvs.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<uint32_t>(i);
  std::sort(order.begin(), order.end(), [&kvs](uint32_t a, uint32_t b) {
    const int c = kvs[a].first.compare(kvs[b].first);
    return c < 0 || (c == 0 && a < b);
  });
  std::vector<uint32_t> out;
  out.reserve(order.size());
  for (size_t i = 0; i < order.size(); ++i) {
    // The last of a run of equal keys is the one given last.
    if (i + 1 == order.size() || kvs[order[i + 1]].first != kvs[order[i]].first) {
      out.push_back(order[i]);
    }
  }
  return out;
}

}  // namespace

Status RocksStore::MSet(const std::vector<std::pair<std::string_view, std::string_view>>& kvs,
                        const std::vector<KnownKey>* known) {
  Hold hold;
  if (Status s = Enter(&hold); !s.ok()) return s;
  const std::vector<uint32_t> unique = LastWins(kvs);
  auto known_present = [&](uint32_t i) { return known != nullptr && (*known)[i].present; };
  // One MultiGet for every old meta neither the caller nor the key filter rules out (one
  // memtable/SST lookup setup for the whole command instead of one Get per key); only the header
  // is decoded: an old string value is never copied.
  std::vector<std::string_view> keys;
  keys.reserve(unique.size());
  for (uint32_t i : unique) {
    if (!known_present(i)) keys.push_back(kvs[i].first);
  }
  std::vector<rocksdb::PinnableSlice> values(keys.size());
  std::vector<rocksdb::Status> statuses(keys.size());
  if (!keys.empty()) MultiGetMetas(keys, values.data(), statuses.data());
  const int64_t now = NowMs();
  Records batch;
  int64_t created = 0;
  size_t read = 0;  // the next of `keys`
  for (uint32_t i : unique) {
    const auto& [key, value] = kvs[i];
    MetaLookup old;
    if (known_present(i)) {
      // As BlindSet: present, with its TTL for the expires= counters; not known to be a live
      // string, so it takes a fresh version, right whatever its type was.
      old.present = true;
      old.meta.expire_at_ms = (*known)[i].expire_at_ms;
    } else if (const size_t r = read++; !statuses[r].IsNotFound()) {
      if (!statuses[r].ok()) return FromRocks(statuses[r]);
      if (!DecodeMetaHeader(std::string_view(values[r].data(), values[r].size()), &old.meta)) {
        return Status::Corruption("undecodable meta record");
      }
      old.present = true;
      old.live = !old.meta.ExpiredAt(now);
    }
    Meta meta;
    meta.type = MetaType::kString;
    if (old.live && old.meta.type == MetaType::kString) {
      meta.version = old.meta.version;
    } else {
      auto v = NewVersion();
      if (!v.ok()) return v.status();
      meta.version = *v;
    }
    meta.value.assign(value.data(), value.size());
    PutMeta(&batch, key, old, meta);
    if (!old.present) ++created;
  }
  if (Status s = Write(&batch); !s.ok()) return s;
  AddKeyCount(created);
  return Status::OK();
}

StatusOr<bool> RocksStore::MSetNx(
    const std::vector<std::pair<std::string_view, std::string_view>>& kvs) {
  Hold hold;
  if (Status s = Enter(&hold); !s.ok()) return s;
  std::vector<std::pair<std::string_view, std::string_view>> unique;
  for (uint32_t i : LastWins(kvs)) unique.push_back(kvs[i]);
  std::vector<MetaLookup> olds(unique.size());
  for (size_t i = 0; i < unique.size(); ++i) {
    MetaLookup& old = olds[i];
    if (Status s = ReadMetaLocked(unique[i].first, &old); !s.ok()) return s;
    if (old.live) return false;
  }
  Records batch;
  int64_t created = 0;
  for (size_t i = 0; i < unique.size(); ++i) {
    auto v = NewVersion();
    if (!v.ok()) return v.status();
    Meta meta;
    meta.type = MetaType::kString;
    meta.version = *v;
    meta.value.assign(unique[i].second.data(), unique[i].second.size());
    PutMeta(&batch, unique[i].first, olds[i], meta);
    if (!olds[i].present) ++created;
  }
  if (Status s = Write(&batch); !s.ok()) return s;
  AddKeyCount(created);
  return true;
}

StatusOr<std::optional<std::string>> RocksStore::GetDel(std::string_view key) {
  Hold hold;
  if (Status s = Enter(&hold); !s.ok()) return s;
  MetaLookup old;
  auto value = ReadString(rocksdb::ReadOptions(), key, &old);
  if (!value.ok() || !value->has_value()) return value;
  if (Status s = DeleteKey(key, old); !s.ok()) return s;
  return value;
}

StatusOr<std::optional<std::string>> RocksStore::GetEx(std::string_view key, const Expiry& expiry) {
  Hold hold;
  if (Status s = Enter(&hold); !s.ok()) return s;
  MetaLookup old;
  auto value = ReadString(rocksdb::ReadOptions(), key, &old);
  if (!value.ok() || !value->has_value()) return value;
  switch (expiry.mode) {
    case Expiry::Mode::kKeep:
      break;
    case Expiry::Mode::kClear:
      if (old.meta.expire_at_ms != 0) {
        if (Status s = WriteString(key, old, old.meta.value, 0); !s.ok()) return s;
      }
      break;
    case Expiry::Mode::kAt:
      if (expiry.at_ms <= NowMs()) {
        if (Status s = DeleteKey(key, old); !s.ok()) return s;
      } else if (Status s = WriteString(key, old, old.meta.value, expiry.at_ms); !s.ok()) {
        return s;
      }
      break;
  }
  return value;
}

StatusOr<int64_t> RocksStore::Append(std::string_view key, std::string_view value) {
  Hold hold;
  if (Status s = Enter(&hold); !s.ok()) return s;
  MetaLookup old;
  auto current = ReadString(rocksdb::ReadOptions(), key, &old);
  if (!current.ok()) return current.status();
  std::string updated = current->value_or(std::string());
  if (updated.size() + value.size() > kMaxStringBytes) {
    return Status::InvalidArgument(kErrStringTooBig);
  }
  updated.append(value.data(), value.size());
  int64_t len = static_cast<int64_t>(updated.size());
  if (Status s = WriteString(key, old, std::move(updated), KeptExpiry(old)); !s.ok()) return s;
  return len;
}

StatusOr<int64_t> RocksStore::StrLen(std::string_view key) {
  Hold hold;
  if (Status s = Enter(&hold); !s.ok()) return s;
  MetaLookup lookup;
  auto value = ReadString(rocksdb::ReadOptions(), key, &lookup);
  if (!value.ok()) return value.status();
  return static_cast<int64_t>(value->has_value() ? (*value)->size() : 0);
}

StatusOr<int64_t> RocksStore::IncrBy(std::string_view key, int64_t delta, int64_t* expire_at_ms) {
  Hold hold;
  if (Status s = Enter(&hold); !s.ok()) return s;
  MetaLookup old;
  auto current = ReadString(rocksdb::ReadOptions(), key, &old);
  if (!current.ok()) return current.status();
  int64_t value = 0;
  if (current->has_value() && !ParseInt64(**current, &value)) {
    return Status::InvalidArgument(kErrNotInteger);
  }
  if ((delta < 0 && value < 0 && delta < INT64_MIN - value) ||
      (delta > 0 && value > 0 && delta > INT64_MAX - value)) {
    return Status::InvalidArgument("increment or decrement would overflow");
  }
  value += delta;
  const int64_t expire_at = KeptExpiry(old);
  if (Status s = WriteString(key, old, FormatInt64(value), expire_at); !s.ok()) return s;
  if (expire_at_ms != nullptr) *expire_at_ms = expire_at;
  return value;
}

StatusOr<std::string> RocksStore::IncrByFloat(std::string_view key, long double delta) {
  Hold hold;
  if (Status s = Enter(&hold); !s.ok()) return s;
  MetaLookup old;
  auto current = ReadString(rocksdb::ReadOptions(), key, &old);
  if (!current.ok()) return current.status();
  long double value = 0;
  if (current->has_value() && !ParseLongDouble(**current, &value)) {
    return Status::InvalidArgument("value is not a valid float");
  }
  value += delta;
  if (std::isnan(value) || std::isinf(value)) {
    return Status::InvalidArgument("increment would produce NaN or Infinity");
  }
  std::string formatted = FormatLongDouble(value);
  if (Status s = WriteString(key, old, formatted, KeptExpiry(old)); !s.ok()) return s;
  return formatted;
}

StatusOr<std::string> RocksStore::GetRange(std::string_view key, int64_t start, int64_t end) {
  Hold hold;
  if (Status s = Enter(&hold); !s.ok()) return s;
  MetaLookup lookup;
  auto value = ReadString(rocksdb::ReadOptions(), key, &lookup);
  if (!value.ok()) return value.status();
  if (!value->has_value()) return std::string();
  const std::string& str = **value;
  int64_t len = static_cast<int64_t>(str.size());
  // Redis getrangeCommand, step by step.
  if (start < 0 && end < 0 && start > end) return std::string();
  if (start < 0) start = len + start;
  if (end < 0) end = len + end;
  if (start < 0) start = 0;
  if (end < 0) end = 0;
  if (end >= len) end = len - 1;
  if (start > end || len == 0) return std::string();
  return str.substr(static_cast<size_t>(start), static_cast<size_t>(end - start + 1));
}

StatusOr<int64_t> RocksStore::SetRange(std::string_view key, int64_t offset, std::string_view value,
                                       uint64_t max_size) {
  Hold hold;
  if (Status s = Enter(&hold); !s.ok()) return s;
  if (offset < 0) return Status::InvalidArgument("offset is out of range");
  MetaLookup old;
  auto current = ReadString(rocksdb::ReadOptions(), key, &old);
  if (!current.ok()) return current.status();
  std::string str = current->value_or(std::string());
  if (value.empty()) return static_cast<int64_t>(str.size());  // nothing to write
  if (static_cast<uint64_t>(offset) + value.size() > max_size) {
    return Status::InvalidArgument(kErrStringTooBig);
  }
  size_t needed = static_cast<size_t>(offset) + value.size();
  if (str.size() < needed) str.resize(needed, '\0');
  std::copy(value.begin(), value.end(), str.begin() + offset);
  int64_t len = static_cast<int64_t>(str.size());
  if (Status s = WriteString(key, old, std::move(str), KeptExpiry(old)); !s.ok()) return s;
  return len;
}

}  // namespace rockcache::storage
