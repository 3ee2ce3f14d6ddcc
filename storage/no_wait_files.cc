// The no-wait file system: see no_wait_files.h.
#include "storage/no_wait_files.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <string>
#include <utility>

namespace rockcache::storage {

namespace {

// At most this many pages are checked with one mincore call (a block is 2-16 KB: one to five).
constexpr size_t kMaxCheckedPages = 64;

size_t PageSize() {
  static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return page;
}

class NoWaitFile final : public rocksdb::FSRandomAccessFileOwnerWrapper {
 public:
  NoWaitFile(std::unique_ptr<rocksdb::FSRandomAccessFile> file, bool mapped)
      : FSRandomAccessFileOwnerWrapper(std::move(file)), mapped_(mapped) {}

  rocksdb::IOStatus Read(uint64_t offset, size_t n, const rocksdb::IOOptions& options,
                         rocksdb::Slice* result, char* scratch,
                         rocksdb::IODebugContext* dbg) const override {
    if (!NoWaitReads::active()) return target()->Read(offset, n, options, result, scratch, dbg);
    if (!mapped_) return rocksdb::IOStatus::Busy("a pread may wait");
    // A mapped file's Read only points `result` into the mapping; nothing is touched yet.
    rocksdb::IOStatus s = target()->Read(offset, n, options, result, scratch, dbg);
    if (!s.ok()) return s;
    if (result->data() == scratch || !PagesResident(result->data(), result->size())) {
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
    *file = std::make_unique<NoWaitFile>(std::move(base), mapped);
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

rocksdb::Env* NoWaitEnv() {
  static rocksdb::Env* const env =
      rocksdb::NewCompositeEnv(std::make_shared<NoWaitFileSystem>(rocksdb::FileSystem::Default()))
          .release();
  return env;
}

}  // namespace rockcache::storage
