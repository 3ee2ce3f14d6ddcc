#include "server/unit_cache.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <utility>

#include "cache/cache.h"
#include "config/current_db.h"

namespace rockcache::server {
namespace {

thread_local UnitCache* tls_running = nullptr;

// What one staging cache holds at most: one shard of the shared cache's budget (an entry bigger
// than that is never cached there either). Eviction beyond it only costs the unit cache hits:
// an evicted staged key is erased from the shared cache at Publish.
uint64_t StagingBudget(const cache::Cache& shared) {
  return shared.max_memory() / (shared.shard_count() == 0 ? 1 : shared.shard_count());
}

}  // namespace

UnitCache* UnitCache::Current() { return tls_running; }

UnitCache::Scope::Scope(cache::Cache* shared) {
  if (shared == nullptr || tls_running != nullptr) return;  // no cache, or inside a unit
  static thread_local UnitCache per_thread;
  per_thread.Begin(shared);
  installed_ = &per_thread;
  tls_running = &per_thread;
}

UnitCache::Scope::~Scope() {
  if (installed_ == nullptr) return;
  if (installed_->active_) installed_->Discard();
  tls_running = nullptr;
}

void UnitCache::Begin(cache::Cache* shared) {
  const uint64_t budget = StagingBudget(*shared);
  if (staging_ == nullptr || shared_ != shared ||
      staging_->max_hash_fields() != shared->max_hash_fields() ||
      staging_->max_list_elements() != shared->max_list_elements()) {
    cache::Options options;
    options.max_memory_bytes = budget;
    options.shards = 1;
    options.max_hash_fields = shared->max_hash_fields();
    options.max_list_elements = shared->max_list_elements();
    staging_ = std::make_unique<cache::Cache>(options);
  } else if (staging_->max_memory() != budget) {
    staging_->SetMaxMemory(budget);  // CONFIG SET cache-maxmemory since the last unit
  }
  shared_ = shared;
  active_ = true;
}

bool UnitCache::IsStaged(std::string_view key, int db) const {
  return static_cast<size_t>(db) < staged_.size() && staged_[db].Contains(key);
}

void UnitCache::Stage(std::string_view key, int db, int64_t now_ms) {
  if (static_cast<size_t>(db) >= staged_.size()) staged_.resize(db + 1);
  if (staged_[db].Contains(key)) return;
  char* bytes = static_cast<char*>(key_bytes_.allocate(std::max<size_t>(key.size(), 1), 1));
  if (!key.empty()) std::memcpy(bytes, key.data(), key.size());
  keys_.emplace_back(bytes, key.size());
  dbs_.push_back(db);
  staged_[db].Insert(keys_.back());
  // Copied under the shared shard's lock: bounded by kMaxCopyBytes.
  std::optional<cache::Value> copy;
  int64_t expire_at = 0;
  const cache::Lookup found =
      shared_->Inspect(key, now_ms, [&](const cache::Value& value, int64_t at) {
        if (cache::Cache::Charge(key, value) > kMaxCopyBytes) return;
        copy = value;
        expire_at = at;
      });
  shared_had_.push_back(found != cache::Lookup::kMiss);
  if (found == cache::Lookup::kAbsent) {
    staging_->Put(key, cache::Value::Absent(), 0, now_ms);
  } else if (copy.has_value()) {
    staging_->Put(key, std::move(*copy), expire_at, now_ms);
  }
}

cache::Cache* UnitCache::Enter(const std::vector<std::string_view>& keys, bool write,
                               int64_t now_ms) {
  const int db = CurrentDb();
  bool staged = write;
  for (size_t i = 0; i < keys.size() && !staged; ++i) staged = IsStaged(keys[i], db);
  if (!staged) return shared_;
  // Every key the command may look up or fill in the staging cache is staged, so that Publish or
  // Discard takes each entry out of it again.
  for (auto key : keys) Stage(key, db, now_ms);
  return staging_.get();
}

void UnitCache::Publish(int64_t now_ms) {
  for (size_t i = 0; i < keys_.size(); ++i) {
    DbScope scope(dbs_[i]);
    const std::string_view key = keys_[i];
    std::optional<cache::Value> value;
    int64_t expire_at = 0;
    // Moved out of the staging entry, which the mutator's false then erases.
    staging_->Update(key, now_ms, [&](cache::Value& staged, int64_t& at) {
      value = std::move(staged);
      expire_at = at;
      return false;
    });
    if (value.has_value() && (expire_at == 0 || expire_at > now_ms)) {
      // A string over a string is rewritten in place (no new entry, no unlinking: as
      // CacheOverwriteString); anything else replaces the entry.
      const bool rewritten = value->is_string() &&
                             shared_->Update(key, now_ms, [&](cache::Value& cached, int64_t& at) {
                               if (!cached.is_string()) return false;
                               cached.str.swap(value->str);
                               at = expire_at;
                               return true;
                             });
      if (!rewritten) shared_->Put(key, std::move(*value), expire_at, now_ms);
    } else {
      // Never copied, evicted, negative or dropped: the shared entry goes.
      if (shared_had_[i]) shared_->Erase(key);
    }
  }
  Reset();
}

void UnitCache::Discard() {
  EraseStagingEntries();
  Reset();
}

void UnitCache::RollbackToSavepoint() { EraseStagingEntries(); }

void UnitCache::DropAll() {
  EraseStagingEntries();
  for (size_t db = 0; db < staged_.size(); ++db) staged_[db].Clear();
  keys_.clear();
  key_bytes_.release();
  dbs_.clear();
  shared_had_.clear();
  shared_->Clear();
}

void UnitCache::EraseStagingEntries() {
  for (size_t i = 0; i < keys_.size(); ++i) {
    DbScope scope(dbs_[i]);
    staging_->Erase(keys_[i]);
  }
}

void UnitCache::Reset() {
  for (int db : dbs_) staged_[db].Clear();
  keys_.clear();
  key_bytes_.release();
  dbs_.clear();
  shared_had_.clear();
  active_ = false;
}

}  // namespace rockcache::server
