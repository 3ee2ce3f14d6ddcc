// The no-wait file system: see no_wait_files.h.
#include "storage/no_wait_files.h"

#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "storage/store.h"

namespace rockcache::storage {

namespace {

// At most this many pages are checked with one mincore call (a block is 2-16 KB: one to five).
constexpr size_t kMaxCheckedPages = 64;

size_t PageSize() {
  static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return page;
}

// The residency memo (no_wait_files.h): each mapped file keeps, per 64 KB stretch, when a thread
// last found the stretch wholly resident (milliseconds on a coarse monotonic clock; 0 = never).
// Relaxed atomics: a stale or lost stamp only costs one more mincore.
constexpr uint64_t kStretchBytes = 64 << 10;
std::atomic<int64_t> memo_ms{0};
thread_local uint64_t tls_checks = 0;  // mincore calls of this thread

int64_t CoarseNowMs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

bool CheckedPagesResident(const char* data, size_t size) {
  ++tls_checks;
  return PagesResident(data, size);
}

// The stamps of one mapped file's stretches.
class ResidencyMemo {
 public:
  explicit ResidencyMemo(uint64_t file_size)
      : size_(file_size),
        stamps_(std::make_unique<std::atomic<int64_t>[]>((file_size + kStretchBytes - 1) /
                                                         kStretchBytes)) {}

  // Whether the pages of [offset, offset + n) of the file mapped at `base` are resident: per
  // stretch the read touches, the stamp while fresh, else one mincore over the stretch.
  bool Resident(const char* base, uint64_t offset, size_t n) {
    const int64_t period = memo_ms.load(std::memory_order_relaxed);
    if (period <= 0 || offset + n > size_) return CheckedPagesResident(base + offset, n);
    if (n == 0) return true;
    const int64_t now = CoarseNowMs();
    const size_t page = PageSize();
    for (uint64_t stretch = offset / kStretchBytes; stretch * kStretchBytes < offset + n;
         ++stretch) {
      std::atomic<int64_t>& stamp = stamps_[stretch];
      const int64_t checked = stamp.load(std::memory_order_relaxed);
      if (checked != 0 && now - checked < period) continue;
      const uint64_t lo = stretch * kStretchBytes;  // page-aligned, as the mapping
      const uint64_t hi = std::min(lo + kStretchBytes, size_);
      const size_t pages = (hi - lo + page - 1) / page;
      unsigned char resident[kMaxCheckedPages];
      if (pages > kMaxCheckedPages) return CheckedPagesResident(base + offset, n);
      ++tls_checks;
      if (mincore(const_cast<char*>(base + lo), hi - lo, resident) != 0) return false;
      bool whole = true;
      for (size_t i = 0; i < pages && whole; ++i) whole = (resident[i] & 1) != 0;
      if (whole) {
        stamp.store(now == 0 ? 1 : now, std::memory_order_relaxed);
        continue;
      }
      // Not all of the stretch: the pages the read covers decide.
      const uint64_t first = (std::max(offset, lo) - lo) / page;
      const uint64_t last = (std::min(offset + n, hi) - 1 - lo) / page;
      for (uint64_t i = first; i <= last; ++i) {
        if ((resident[i] & 1) == 0) return false;
      }
    }
    return true;
  }

 private:
  const uint64_t size_;
  const std::unique_ptr<std::atomic<int64_t>[]> stamps_;
};

class NoWaitFile final : public rocksdb::FSRandomAccessFileOwnerWrapper {
 public:
  // `size`: the file's size when opened (an SST file never changes); 0 if unknown (no memo).
  NoWaitFile(std::unique_ptr<rocksdb::FSRandomAccessFile> file, bool mapped, uint64_t size)
      : FSRandomAccessFileOwnerWrapper(std::move(file)), mapped_(mapped) {
    if (mapped && size > 0) memo_ = std::make_unique<ResidencyMemo>(size);
  }

  rocksdb::IOStatus Read(uint64_t offset, size_t n, const rocksdb::IOOptions& options,
                         rocksdb::Slice* result, char* scratch,
                         rocksdb::IODebugContext* dbg) const override {
    if (!NoWaitReads::active()) return target()->Read(offset, n, options, result, scratch, dbg);
    if (!mapped_) return rocksdb::IOStatus::Busy("a pread may wait");
    // A mapped file's Read only points `result` into the mapping; nothing is touched yet.
    rocksdb::IOStatus s = target()->Read(offset, n, options, result, scratch, dbg);
    if (!s.ok()) return s;
    // RocksDB maps an SST file whole: the mapping starts `offset` bytes before the data.
    const bool resident =
        result->data() != scratch &&
        (memo_ != nullptr ? memo_->Resident(result->data() - offset, offset, result->size())
                          : CheckedPagesResident(result->data(), result->size()));
    if (!resident) {
      *result = rocksdb::Slice();
      return rocksdb::IOStatus::Busy("pages not resident");
    }
    return s;
  }

  rocksdb::IOStatus MultiRead(rocksdb::FSReadRequest* reqs, size_t num_reqs,
                              const rocksdb::IOOptions& options,
                              rocksdb::IODebugContext* dbg) override {
    if (NoWaitReads::active()) return rocksdb::IOStatus::Busy("no multi-reads without waiting");
    return target()->MultiRead(reqs, num_reqs, options, dbg);
  }

 private:
  const bool mapped_;
  std::unique_ptr<ResidencyMemo> memo_;
};

class NoWaitFileSystem final : public rocksdb::FileSystemWrapper {
 public:
  explicit NoWaitFileSystem(const std::shared_ptr<rocksdb::FileSystem>& base)
      : FileSystemWrapper(base) {}

  const char* Name() const override { return "RockcacheNoWaitFileSystem"; }

  rocksdb::IOStatus NewRandomAccessFile(const std::string& name,
                                        const rocksdb::FileOptions& options,
                                        std::unique_ptr<rocksdb::FSRandomAccessFile>* file,
                                        rocksdb::IODebugContext* dbg) override {
    std::unique_ptr<rocksdb::FSRandomAccessFile> base;
    rocksdb::IOStatus s = target()->NewRandomAccessFile(name, options, &base, dbg);
    if (!s.ok()) return s;
    const bool mapped = options.use_mmap_reads && !options.use_direct_reads;
    uint64_t size = 0;
    if (mapped && !target()->GetFileSize(name, rocksdb::IOOptions(), &size, dbg).ok()) size = 0;
    *file = std::make_unique<NoWaitFile>(std::move(base), mapped, size);
    return s;
  }
};

}  // namespace

bool PagesResident(const char* data, size_t size) {
  if (size == 0) return true;
  const size_t page = PageSize();
  const auto begin = reinterpret_cast<uintptr_t>(data) & ~(page - 1);
  const auto end = reinterpret_cast<uintptr_t>(data) + size;
  const size_t pages = (end - begin + page - 1) / page;
  if (pages > kMaxCheckedPages) return false;
  unsigned char resident[kMaxCheckedPages];
  if (mincore(reinterpret_cast<void*>(begin), end - begin, resident) != 0) return false;
  for (size_t i = 0; i < pages; ++i) {
    if ((resident[i] & 1) == 0) return false;
  }
  return true;
}

void SetResidencyMemoMs(int64_t ms) { memo_ms.store(ms, std::memory_order_relaxed); }

uint64_t ResidencyChecksOfThisThread() { return tls_checks; }

rocksdb::Env* NoWaitEnv() {
  static rocksdb::Env* const env =
      rocksdb::NewCompositeEnv(std::make_shared<NoWaitFileSystem>(rocksdb::FileSystem::Default()))
          .release();
  return env;
}

}  // namespace rockcache::storage
