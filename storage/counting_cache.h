// storage::CountingCache — RocksDB's block cache with hit and miss counts (INFO's
// rocksdb_block_cache_hits / _misses). Internal to storage/: includes RocksDB.
//
// RocksDB counts block cache hits only through a Statistics object, which times and counts every
// operation of the database. This wrapper forwards every call to the real cache (an LRUCache)
// and counts its lookups: a lookup that returns a handle is a hit, one that returns nullptr a
// miss (a read of the block from its file follows). Index, filter and data blocks all count.
//
// Threads: any (RocksDB calls it from every reading thread). The counts are relaxed atomics in
// a few cache-line-sized slots, each thread counting in its own slot (threads beyond the slots
// share them), so readers on different cores do not bounce one line; Counts() sums the slots.
#pragma once

#include <rocksdb/cache.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace rockcache::storage {

class CountingCache final : public rocksdb::Cache {
 public:
  explicit CountingCache(std::shared_ptr<rocksdb::Cache> target) : target_(std::move(target)) {}

  struct Counts {
    uint64_t hits = 0;
    uint64_t misses = 0;
  };
  Counts counts() const;

  const char* Name() const override { return target_->Name(); }
  using rocksdb::Cache::Insert;
  rocksdb::Status Insert(const rocksdb::Slice& key, void* value, size_t charge, DeleterFn deleter,
                         Handle** handle, Priority priority) override {
    return target_->Insert(key, value, charge, deleter, handle, priority);
  }
  rocksdb::Status Insert(const rocksdb::Slice& key, void* value, const CacheItemHelper* helper,
                         size_t charge, Handle** handle, Priority priority) override {
    return target_->Insert(key, value, helper, charge, handle, priority);
  }
  using rocksdb::Cache::Lookup;
  Handle* Lookup(const rocksdb::Slice& key, rocksdb::Statistics* stats) override {
    return Count(target_->Lookup(key, stats));
  }
  Handle* Lookup(const rocksdb::Slice& key, const CacheItemHelper* helper,
                 const CreateCallback& create_cb, Priority priority, bool wait,
                 rocksdb::Statistics* stats) override {
    return Count(target_->Lookup(key, helper, create_cb, priority, wait, stats));
  }
  bool Ref(Handle* handle) override { return target_->Ref(handle); }
  using rocksdb::Cache::Release;
  bool Release(Handle* handle, bool erase_if_last_ref) override {
    return target_->Release(handle, erase_if_last_ref);
  }
  bool Release(Handle* handle, bool useful, bool erase_if_last_ref) override {
    return target_->Release(handle, useful, erase_if_last_ref);
  }
  void* Value(Handle* handle) override { return target_->Value(handle); }
  void Erase(const rocksdb::Slice& key) override { target_->Erase(key); }
  uint64_t NewId() override { return target_->NewId(); }
  void SetCapacity(size_t capacity) override { target_->SetCapacity(capacity); }
  void SetStrictCapacityLimit(bool strict) override { target_->SetStrictCapacityLimit(strict); }
  bool HasStrictCapacityLimit() const override { return target_->HasStrictCapacityLimit(); }
  size_t GetCapacity() const override { return target_->GetCapacity(); }
  size_t GetUsage() const override { return target_->GetUsage(); }
  size_t GetUsage(Handle* handle) const override { return target_->GetUsage(handle); }
  size_t GetOccupancyCount() const override { return target_->GetOccupancyCount(); }
  size_t GetTableAddressCount() const override { return target_->GetTableAddressCount(); }
  size_t GetPinnedUsage() const override { return target_->GetPinnedUsage(); }
  size_t GetCharge(Handle* handle) const override { return target_->GetCharge(handle); }
  DeleterFn GetDeleter(Handle* handle) const override { return target_->GetDeleter(handle); }
  void DisownData() override { target_->DisownData(); }
  void ApplyToAllEntries(const std::function<void(const rocksdb::Slice& key, void* value,
                                                  size_t charge, DeleterFn deleter)>& callback,
                         const ApplyToAllEntriesOptions& opts) override {
    target_->ApplyToAllEntries(callback, opts);
  }
  void EraseUnRefEntries() override { target_->EraseUnRefEntries(); }
  std::string GetPrintableOptions() const override { return target_->GetPrintableOptions(); }
  bool IsReady(Handle* handle) override { return target_->IsReady(handle); }
  void Wait(Handle* handle) override { target_->Wait(handle); }
  void WaitAll(std::vector<Handle*>& handles) override { target_->WaitAll(handles); }

 private:
  static constexpr size_t kSlots = 8;
  struct alignas(64) Slot {
    std::atomic<uint64_t> hits{0};
    std::atomic<uint64_t> misses{0};
  };
  Handle* Count(Handle* handle) {
    Slot& slot = slots_[MySlot()];
    (handle != nullptr ? slot.hits : slot.misses).fetch_add(1, std::memory_order_relaxed);
    return handle;
  }
  static size_t MySlot();

  std::shared_ptr<rocksdb::Cache> target_;
  Slot slots_[kSlots];
};

}  // namespace rockcache::storage
