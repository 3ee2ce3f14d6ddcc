// A network thread's read of a cache miss (Store::TryGetString) answers from file pages the OS
// holds in memory and refuses, without waiting, when they are not (storage/no_wait_files.h).
// The pages are dropped from the page cache with posix_fadvise(DONTNEED) and brought back with a
// plain read of the file, so the test sees residency itself, not timing.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "storage/data_dir.h"
#include "storage/no_wait_files.h"
#include "tests/support/store_fixture.h"

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace rockcache::storage::no_wait_read_test {
namespace {

using testing::Ok;
using testing::TempDir;

std::string KeyOf(int i) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "key:%08d", i);
  return buf;
}

// Calls `fn(fd)` for every SST file of the database in the data directory `dir`.
template <typename Fn>
void ForEachSst(const std::string& dir, Fn fn) {
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(data_dir::DatabasePath(dir))) {
    if (entry.path().extension() != ".sst") continue;
    const int fd = open(entry.path().c_str(), O_RDONLY);
    REQUIRE(fd >= 0);
    fn(fd);
    close(fd);
    ++files;
  }
  REQUIRE(files > 0);
}

void DropFromPageCache(const std::string& dir) {
  ForEachSst(dir, [](int fd) {
    REQUIRE(fdatasync(fd) == 0);
    REQUIRE(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) == 0);
  });
}

// The fraction of the SST files' pages the page cache holds (mincore over a mapping of each).
double ResidentFraction(const std::string& dir) {
  size_t pages = 0;
  size_t resident = 0;
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  ForEachSst(dir, [&](int fd) {
    const off_t size = lseek(fd, 0, SEEK_END);
    REQUIRE(size > 0);
    void* map = mmap(nullptr, static_cast<size_t>(size), PROT_READ, MAP_SHARED, fd, 0);
    REQUIRE(map != MAP_FAILED);
    std::vector<unsigned char> vec((static_cast<size_t>(size) + page - 1) / page);
    REQUIRE(mincore(map, static_cast<size_t>(size), vec.data()) == 0);
    for (unsigned char v : vec) resident += v & 1;
    pages += vec.size();
    munmap(map, static_cast<size_t>(size));
  });
  return pages == 0 ? 0 : static_cast<double>(resident) / static_cast<double>(pages);
}

// Drops the SST files' pages and waits (up to 5 s, dropping again) until the page cache holds
// fewer than 5% of them. False if it kept more: the kernel may keep a page another thread has
// mapped or isolated at that moment (seen once on a loaded 2-core VM, every page kept).
bool DropUntilGone(const std::string& dir) {
  for (int attempt = 0; attempt < 50; ++attempt) {
    DropFromPageCache(dir);
    if (ResidentFraction(dir) < 0.05) return true;
    usleep(100 * 1000);
  }
  return false;
}

void ReadIntoPageCache(const std::string& dir) {
  ForEachSst(dir, [](int fd) {
    std::vector<char> buf(1 << 16);
    while (read(fd, buf.data(), buf.size()) > 0) {
    }
  });
}

TEST_CASE("PagesResident follows the page cache of a mapped file", "[storage][no-wait]") {
  TempDir dir;
  const std::string path = dir.path() + "/f";
  const int fd = open(path.c_str(), O_RDWR | O_CREAT, 0600);
  REQUIRE(fd >= 0);
  const size_t size = 8 << 20;
  REQUIRE(ftruncate(fd, static_cast<off_t>(size)) == 0);  // a hole: no page is in memory
  void* map = mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
  REQUIRE(map != MAP_FAILED);
  const char* bytes = static_cast<const char*>(map);
  CHECK_FALSE(PagesResident(bytes + 100, 300));
  CHECK(PagesResident(bytes, 0));
  char buf[300];
  REQUIRE(pread(fd, buf, sizeof(buf), 1 << 20) == static_cast<ssize_t>(sizeof(buf)));
  CHECK(PagesResident(bytes + (1 << 20), sizeof(buf)));        // read into the page cache
  CHECK_FALSE(PagesResident(bytes + (6 << 20), sizeof(buf)));  // far beyond its read-ahead
  munmap(map, size);
  close(fd);
}

TEST_CASE("A no-wait read answers from resident file pages and refuses the others",
          "[storage][no-wait]") {
  TempDir dir;
  Options o;
  o.dir = dir.path();
  o.write_buffer_bytes = 4 << 20;
  o.block_cache_bytes = 64 << 10;  // holds almost none of the 8 MB of data blocks
  o.mmap_reads = true;
  auto store = Ok(Store::Open(o));
  const std::string value(400, 'v');
  constexpr int kKeys = 20000;
  for (int i = 0; i < kKeys; i += 500) {
    std::vector<std::string> keys;
    std::vector<std::pair<std::string_view, std::string_view>> kvs;
    for (int j = i; j < i + 500; ++j) keys.push_back(KeyOf(j));
    for (const auto& k : keys) kvs.emplace_back(k, value);
    REQUIRE(store->MSet(kvs).ok());
  }
  REQUIRE(store->CompactAll().ok());  // every key in a file, none in a memtable

  if (!DropUntilGone(dir.path())) {
    WARN("the page cache kept " << ResidentFraction(dir.path()) * 100
                                << "% of the files' pages: nothing to refuse, check skipped");
    return;
  }
  int refused = 0;
  for (int i = 0; i < 100; ++i) {
    MemoryRead read = store->TryGetString(KeyOf(i * 197), 1 << 20, MemoryReach::kResidentFiles);
    if (read.outcome == MemoryRead::Outcome::kNeedsStorage) ++refused;
  }
  // Only blocks a neighbouring read faulted in, or the block cache holds, can answer.
  CHECK(refused >= 90);

  // A worker's read of the same keys reads the files for real.
  for (int i = 0; i < 100; ++i) CHECK(Ok(store->Get(KeyOf(i * 197))) == value);

  ReadIntoPageCache(dir.path());
  // Asked for RocksDB's caches only, a read does not look at the resident pages.
  int refused_from_caches = 0;
  for (int i = 0; i < 100; ++i) {
    MemoryRead read =
        store->TryGetString(KeyOf(i * 197 + 100), 1 << 20, MemoryReach::kRocksDbCaches);
    if (read.outcome == MemoryRead::Outcome::kNeedsStorage) ++refused_from_caches;
  }
  CHECK(refused_from_caches >= 90);
  for (int i = 0; i < 100; ++i) {
    MemoryRead read = store->TryGetString(KeyOf(i * 197 + 1), 1 << 20, MemoryReach::kResidentFiles);
    REQUIRE(read.outcome == MemoryRead::Outcome::kString);
    CHECK(read.value == value);
  }
}

// Sets the residency memo's period for the scope (process-wide), and back to 0 after.
class MemoPeriod {
 public:
  explicit MemoPeriod(int64_t ms) { SetResidencyMemoMs(ms); }
  ~MemoPeriod() { SetResidencyMemoMs(0); }
  MemoPeriod(const MemoPeriod&) = delete;
  MemoPeriod& operator=(const MemoPeriod&) = delete;
};

TEST_CASE("The residency memo trusts a wholly resident stretch for its period, nothing else",
          "[storage][no-wait]") {
  TempDir dir;
  Options o;
  o.dir = dir.path();
  o.write_buffer_bytes = 4 << 20;
  o.block_cache_bytes = 64 << 10;
  o.mmap_reads = true;
  auto store = Ok(Store::Open(o));
  const std::string value(400, 'v');
  constexpr int kKeys = 20000;
  for (int i = 0; i < kKeys; i += 500) {
    std::vector<std::string> keys;
    std::vector<std::pair<std::string_view, std::string_view>> kvs;
    for (int j = i; j < i + 500; ++j) keys.push_back(KeyOf(j));
    for (const auto& k : keys) kvs.emplace_back(k, value);
    REQUIRE(store->MSet(kvs).ok());
  }
  REQUIRE(store->CompactAll().ok());
  if (!DropUntilGone(dir.path())) {
    WARN("the page cache kept " << ResidentFraction(dir.path()) * 100
                                << "% of the files' pages: nothing to refuse, check skipped");
    return;
  }
  auto try_get = [&](int i) {
    return store->TryGetString(KeyOf(i), 1 << 20, MemoryReach::kResidentFiles).outcome;
  };
  // Each read counts the mincore calls it made.
  auto checks_of = [](auto&& read) {
    const uint64_t before = ResidencyChecksOfThisThread();
    read();
    return ResidencyChecksOfThisThread() - before;
  };
  MemoPeriod memo(60000);
  const int key = 7777;
  // Not resident: refused, and nothing is remembered (each try asks again).
  MemoryRead::Outcome outcome{};
  CHECK(checks_of([&] { outcome = try_get(key); }) >= 1);
  CHECK(outcome == MemoryRead::Outcome::kNeedsStorage);
  CHECK(checks_of([&] { outcome = try_get(key); }) >= 1);
  CHECK(outcome == MemoryRead::Outcome::kNeedsStorage);

  ReadIntoPageCache(dir.path());
  CHECK(checks_of([&] { outcome = try_get(key); }) >= 1);  // found resident: remembered
  CHECK(outcome == MemoryRead::Outcome::kString);
  CHECK(checks_of([&] { outcome = try_get(key); }) == 0);  // the memo answers
  CHECK(outcome == MemoryRead::Outcome::kString);
  CHECK(checks_of([&] { outcome = try_get(key + 1); }) == 0);  // its neighbour: same stretch
  CHECK(outcome == MemoryRead::Outcome::kString);

  SetResidencyMemoMs(0);  // off: every read asks
  CHECK(checks_of([&] { outcome = try_get(key); }) == 1);
  CHECK(outcome == MemoryRead::Outcome::kString);
}

TEST_CASE("Without mmap reads a no-wait read never reads a file", "[storage][no-wait]") {
  TempDir dir;
  Options o;
  o.dir = dir.path();
  o.block_cache_bytes = 64 << 10;
  o.mmap_reads = false;
  auto store = Ok(Store::Open(o));
  const std::string value(400, 'v');
  for (int i = 0; i < 2000; ++i) REQUIRE(store->Set(KeyOf(i), value, SetOptions()).ok());
  REQUIRE(store->CompactAll().ok());
  ReadIntoPageCache(dir.path());  // resident, but a pread could still wait
  int refused = 0;
  for (int i = 0; i < 50; ++i) {
    if (store->TryGetString(KeyOf(i * 37), 1 << 20, MemoryReach::kResidentFiles).outcome ==
        MemoryRead::Outcome::kNeedsStorage) {
      ++refused;
    }
  }
  CHECK(refused >= 40);
}

}  // namespace
}  // namespace rockcache::storage::no_wait_read_test
