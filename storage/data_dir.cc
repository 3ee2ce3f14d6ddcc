// The data directory's layout, lock and start-up preparation (data_dir.h).
#include "storage/data_dir.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <vector>

namespace rockcache::storage::data_dir {
namespace {

namespace fs = std::filesystem;

constexpr const char* kDatabase = "db";
constexpr const char* kMigrating = "db.migrating";
constexpr const char* kReceived = "sync";
constexpr const char* kReplaced = "replaced";
constexpr const char* kDiscarded = "discarded";
constexpr const char* kSyncCheckpointPrefix = "sync-checkpoint-";
constexpr const char* kLock = "LOCK";

std::string Join(const std::string& dir, const char* name) {
  std::string out = Trimmed(dir);
  if (out != "/") out += '/';
  return out + name;
}

bool StartsWith(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// A name RocksDB gives an entry of its database directory (its filename.cc): the ones moved by
// the migration. LOCK is not among them (it stays, as the directory's lock).
bool IsRocksDbEntry(const std::string& name) {
  if (name == "CURRENT" || name == "IDENTITY" || name == "LOG" || name == "archive") return true;
  if (StartsWith(name, "LOG.old.") || StartsWith(name, "MANIFEST-") ||
      StartsWith(name, "OPTIONS-") || StartsWith(name, "METADB-")) {
    return true;
  }
  // <number>.log / .sst / .ldb / .blob / .dbtmp, and their .trash.
  size_t digits = 0;
  while (digits < name.size() && name[digits] >= '0' && name[digits] <= '9') ++digits;
  return digits > 0 && digits < name.size() && name[digits] == '.';
}

Status Error(const std::string& what, const std::string& path, const std::error_code& ec) {
  return Status::IOError(what + " " + path + ": " + ec.message());
}

void Note(std::string* notes, const std::string& line) {
  if (notes == nullptr) return;
  if (!notes->empty()) *notes += '\n';
  *notes += line;
}

// Moves every RocksDB entry at the root of `dir` into dir/db.migrating (created when missing),
// then renames that to dir/db. Resumable at any point (data_dir.h).
Status Migrate(const std::string& dir, std::string* notes) {
  const std::string migrating = Join(dir, kMigrating);
  std::error_code ec;
  if (!fs::exists(migrating, ec)) {
    fs::create_directory(migrating, ec);
    if (ec) return Error("cannot create", migrating, ec);
    if (Status s = SyncDirectory(dir); !s.ok()) return s;
  }
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    std::string name = entry.path().filename().string();
    if (IsRocksDbEntry(name)) names.push_back(std::move(name));
  }
  if (ec) return Error("cannot list", dir, ec);
  for (const std::string& name : names) {
    fs::rename(Join(dir, name.c_str()), Join(migrating, name.c_str()), ec);
    if (ec) return Error("cannot move into " + migrating + ":", Join(dir, name.c_str()), ec);
  }
  if (Status s = SyncDirectory(migrating); !s.ok()) return s;
  if (Status s = SyncDirectory(dir); !s.ok()) return s;
  const std::string database = Join(dir, kDatabase);
  fs::rename(migrating, database, ec);
  if (ec) return Error("cannot rename " + migrating + " to", database, ec);
  if (Status s = SyncDirectory(dir); !s.ok()) return s;
  Note(notes, "moved the database at the root of " + dir + " (" + std::to_string(names.size()) +
                  " entries) into " + database);
  return Status::OK();
}

}  // namespace

std::string Trimmed(const std::string& dir) {
  std::string out = dir;
  while (out.size() > 1 && out.back() == '/') out.pop_back();
  return out;
}

std::string DatabasePath(const std::string& dir) { return Join(dir, kDatabase); }
std::string ReceivedSyncPath(const std::string& dir) { return Join(dir, kReceived); }
std::string ReplacedPath(const std::string& dir) { return Join(dir, kReplaced); }
std::string DiscardedPath(const std::string& dir) { return Join(dir, kDiscarded); }
std::string SyncCheckpointPath(const std::string& dir, uint64_t n) {
  return Join(dir, (kSyncCheckpointPrefix + std::to_string(n)).c_str());
}

DirLock& DirLock::operator=(DirLock&& other) noexcept {
  if (this != &other) {
    Release();
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

Status DirLock::Acquire(const std::string& dir) {
  Release();
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Error("cannot create", dir, ec);
  const std::string path = Join(dir, kLock);
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return Status::IOError("cannot open " + path + ": " + std::strerror(errno));
  // The same kind of lock RocksDB takes on its LOCK file (an older release's database had it
  // here): either one refuses the other.
  struct flock lock {};
  lock.l_type = F_WRLCK;
  lock.l_whence = SEEK_SET;
  if (fcntl(fd, F_SETLK, &lock) != 0) {
    const int err = errno;
    close(fd);
    if (err == EACCES || err == EAGAIN) {
      return Status::Busy(dir + " is in use by another process (lock on " + path + ")");
    }
    return Status::IOError("cannot lock " + path + ": " + std::strerror(err));
  }
  fd_ = fd;
  return Status::OK();
}

void DirLock::Release() {
  if (fd_ < 0) return;
  close(fd_);  // drops the fcntl lock
  fd_ = -1;
}

Status SyncDirectory(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Status::IOError("cannot open " + path + ": " + std::strerror(errno));
  const int rc = fsync(fd);
  const int err = errno;
  close(fd);
  if (rc != 0) return Status::IOError("cannot fsync " + path + ": " + std::strerror(err));
  return Status::OK();
}

Status Prepare(const std::string& dir, std::string* notes) {
  std::error_code ec;
  const std::string database = DatabasePath(dir);
  const std::string replaced = ReplacedPath(dir);
  const std::string migrating = Join(dir, kMigrating);

  // A swap that did not reach its commit point: the old database goes back (data_dir.h).
  if (fs::exists(replaced, ec)) {
    if (fs::exists(database, ec)) {
      fs::remove_all(database, ec);
      if (ec) return Error("cannot remove", database, ec);
    }
    fs::rename(replaced, database, ec);
    if (ec) return Error("cannot move back", replaced, ec);
    if (Status s = SyncDirectory(dir); !s.ok()) return s;
    Note(notes,
         "a full sync was cut before it committed: put the old database " + replaced + " back");
  }

  // Full-sync leftovers: the received copy, the checkpoints being sent.
  std::vector<fs::path> leftovers;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name == kReceived || name == kDiscarded || StartsWith(name, kSyncCheckpointPrefix)) {
      leftovers.push_back(entry.path());
    }
  }
  if (ec) return Error("cannot list", dir, ec);
  for (const fs::path& path : leftovers) {
    fs::remove_all(path, ec);
    if (ec) return Error("cannot remove", path.string(), ec);
    Note(notes, "removed " + path.string() + " (left by a full sync)");
  }

  // The layout before dir/db: CURRENT at the root, or a migration cut short.
  const bool old_layout = fs::exists(Join(dir, "CURRENT"), ec);
  const bool cut_migration = fs::exists(migrating, ec);
  if (!old_layout && !cut_migration) return Status::OK();
  if (fs::exists(database, ec)) {
    return Status::InvalidArgument(
        dir + " holds both " + database + " and " +
        (cut_migration ? migrating : "a database at its root (" + Join(dir, "CURRENT") + ")") +
        ": move the one that is not the data elsewhere");
  }
  return Migrate(dir, notes);
}

}  // namespace rockcache::storage::data_dir
