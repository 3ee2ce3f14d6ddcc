#include "server/rdb_import.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "config/current_db.h"
#include "server/rdb/value_codec.h"
#include "server/scripting/functions.h"
#include "server/scripting/script_vm.h"
#include "server/server.h"
#include "storage/store.h"

namespace rockcache::server {
namespace {

// RDB opcodes (rdb.h).
constexpr uint8_t kOpFunction2 = 245, kOpFunctionPreGa = 246, kOpModuleAux = 247, kOpIdle = 248,
                  kOpFreq = 249, kOpAux = 250, kOpResizeDb = 251, kOpExpireMs = 252,
                  kOpExpireSec = 253, kOpSelectDb = 254, kOpEof = 255;

// A read-only mapping of a file, unmapped on destruction.
class MappedFile {
 public:
  ~MappedFile() {
    if (data_ != nullptr) munmap(data_, size_);
  }
  Status Open(const std::string& path) {
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return Status::IOError(path + ": " + std::strerror(errno));
    struct stat st {};
    if (fstat(fd, &st) != 0) {
      close(fd);
      return Status::IOError(path + ": " + std::strerror(errno));
    }
    size_ = static_cast<size_t>(st.st_size);
    if (size_ > 0) {
      void* p = mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
      if (p == MAP_FAILED) {
        close(fd);
        return Status::IOError(path + ": mmap: " + std::strerror(errno));
      }
      data_ = static_cast<char*>(p);
      madvise(data_, size_, MADV_SEQUENTIAL);
    }
    close(fd);
    return Status::OK();
  }
  std::string_view view() const { return {data_, size_}; }
  // Drops the pages before `offset` from memory (they are not read again).
  void Release(size_t offset) {
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    const size_t end = offset / page * page;
    if (end > released_) {
      madvise(data_ + released_, end - released_, MADV_DONTNEED);
      released_ = end;
    }
  }

 private:
  char* data_ = nullptr;
  size_t size_ = 0;
  size_t released_ = 0;
};

Status Bad(const rdb::Reader& reader, const std::string& what) {
  return Status::Corruption("RDB file corrupt at byte " + std::to_string(reader.position()) + ": " +
                            what);
}

int64_t SteadyMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

Status ImportRdb(const std::string& path, storage::Store& store, RdbImportStats* stats) {
  MappedFile file;
  if (Status s = file.Open(path); !s.ok()) return s;
  const std::string_view data = file.view();
  rdb::Reader reader(data);
  const int64_t start = SteadyMs();
  int64_t last_progress = start;
  std::string_view magic;
  if (!reader.ReadRaw(9, &magic) || magic.substr(0, 5) != "REDIS") {
    return Status::Corruption("not an RDB file (no REDIS signature)");
  }
  int version = 0;
  for (char c : magic.substr(5)) {
    if (c < '0' || c > '9') return Status::Corruption("not an RDB file (bad version)");
    version = version * 10 + (c - '0');
  }
  if (version < 1 || version > rdb::kRdbVersion) {
    return Status::InvalidArgument("can't handle RDB format version " + std::to_string(version));
  }
  int db = 0;
  int64_t expire_at = -1;
  uint64_t crc = 0;  // of data[0, crc_pos)
  size_t crc_pos = 0;
  bool encoded = false;
  uint64_t n = 0;
  for (;;) {
    uint8_t op = 0;
    if (!reader.ReadByte(&op)) return Bad(reader, "unexpected end of file");
    if (op == kOpEof) break;
    if (op == kOpExpireMs || op == kOpExpireSec) {
      uint64_t t = 0;
      if (!reader.ReadLittleEndian(op == kOpExpireMs ? 8 : 4, &t)) return Bad(reader, "expire");
      expire_at = static_cast<int64_t>(op == kOpExpireMs ? t : t * 1000);
      continue;
    }
    if (op == kOpFreq) {
      uint8_t freq = 0;
      if (!reader.ReadByte(&freq)) return Bad(reader, "freq");
      continue;
    }
    if (op == kOpIdle) {
      if (!reader.ReadLength(&n, &encoded) || encoded) return Bad(reader, "idle");
      continue;
    }
    if (op == kOpSelectDb) {
      if (!reader.ReadLength(&n, &encoded) || encoded) return Bad(reader, "selectdb");
      if (n >= static_cast<uint64_t>(store.databases())) {
        return Status::InvalidArgument("RDB file selects database " + std::to_string(n) +
                                       ", past databases " + std::to_string(store.databases()));
      }
      db = static_cast<int>(n);
      continue;
    }
    if (op == kOpResizeDb) {
      uint64_t m = 0;
      if (!reader.ReadLength(&n, &encoded) || encoded || !reader.ReadLength(&m, &encoded) ||
          encoded) {
        return Bad(reader, "resizedb");
      }
      continue;
    }
    if (op == kOpAux) {
      std::string name, value;
      if (!reader.ReadString(&name) || !reader.ReadString(&value)) return Bad(reader, "aux");
      continue;
    }
    if (op == kOpModuleAux) return Status::InvalidArgument("RDB file holds module data");
    if (op == kOpFunctionPreGa) {
      return Status::InvalidArgument("RDB file holds pre-GA functions (Redis 7.0 RC)");
    }
    if (op == kOpFunction2) {
      std::string code;
      if (!reader.ReadString(&code)) return Bad(reader, "function library");
      scripting::LibraryInfo info;
      if (Status s = scripting::CheckLibrary(code, &info); !s.ok()) return s;
      if (Status s = store.PutServerRecord(scripting::LibraryRecordName(info.name), code);
          !s.ok()) {
        return s;
      }
      ++stats->functions;
      continue;
    }
    // A key: its type (op), name and value.
    std::string key;
    if (!reader.ReadString(&key)) return Bad(reader, "key name");
    storage::KeyValue value;
    rdb::DecodeBudget budget(reader.remaining());
    if (!rdb::ReadObject(&reader, op, &budget, &value)) {
      return Bad(reader, "value of key '" + key + "' (type " + std::to_string(op) + ")");
    }
    const int64_t now = NowUnixMs();
    if (expire_at >= 0 && expire_at <= now) {
      ++stats->expired_skipped;
    } else {
      value.expire_at_ms = expire_at > 0 ? expire_at : 0;
      DbScope scope(store.PhysicalDb(db));
      auto written = store.WriteValue(key, value, /*replace=*/true);
      if (!written.ok()) return written.status();
      ++stats->keys;
    }
    expire_at = -1;
    if ((stats->keys & 1023) == 0) {
      // The checksum runs along with the reading, so each page is read once and dropped.
      crc = rdb::Crc64(crc, data.substr(crc_pos, reader.position() - crc_pos));
      crc_pos = reader.position();
      file.Release(crc_pos);
      const int64_t t = SteadyMs();
      if (t - last_progress >= 1000) {
        last_progress = t;
        const double seconds = static_cast<double>(t - start) / 1000.0;
        spdlog::info("import-rdb: {} keys, {:.1f} of {:.1f} MB ({:.0f}%), {:.0f} keys/s",
                     stats->keys, reader.position() / 1e6, data.size() / 1e6,
                     100.0 * static_cast<double>(reader.position()) / data.size(),
                     stats->keys / std::max(seconds, 0.001));
      }
    }
  }
  stats->bytes = reader.position();
  stats->elapsed_ms = SteadyMs() - start;
  // The checksum (RDB 5+): CRC-64 of everything before it; 0 = not computed by the writer.
  if (version >= 5) {
    const size_t body = reader.position();
    crc = rdb::Crc64(crc, data.substr(crc_pos, body - crc_pos));
    uint64_t stated = 0;
    if (!reader.ReadLittleEndian(8, &stated)) return Bad(reader, "missing checksum");
    if (stated != 0 && stated != crc) {
      return Status::Corruption("RDB file checksum mismatch (the keys were written)");
    }
  }
  return Status::OK();
}

int RunRdbImport(const config::Config& config, const std::string& path) {
  auto store = storage::Store::Open(StoreOptions(config));
  if (!store.ok()) {
    spdlog::critical("import-rdb: cannot open the store: {}", store.status().ToString());
    return 1;
  }
  LogOpenNotes(**store);
  spdlog::info("import-rdb: loading {} into {}", path, config.GetString("dir"));
  RdbImportStats stats;
  const Status s = ImportRdb(path, **store, &stats);
  const double seconds = std::max<double>(stats.elapsed_ms, 1) / 1000.0;
  spdlog::info(
      "import-rdb: {} keys written, {} already expired skipped, {} function libraries, {:.1f} MB "
      "in {:.1f} s ({:.0f} keys/s)",
      stats.keys, stats.expired_skipped, stats.functions, stats.bytes / 1e6, seconds,
      stats.keys / seconds);
  const Status closed = (*store)->Close();
  if (!s.ok()) {
    spdlog::critical("import-rdb: {}", s.ToString());
    return 1;
  }
  if (!closed.ok()) {
    spdlog::critical("import-rdb: closing the store: {}", closed.ToString());
    return 1;
  }
  return 0;
}

}  // namespace rockcache::server
