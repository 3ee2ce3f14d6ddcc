// MIGRATE host port key|"" destination-db timeout [COPY] [REPLACE] [AUTH password]
// [AUTH2 username password] [KEYS key...]: DUMPs the keys, sends SELECT / AUTH and one RESTORE
// per key to the target (rockcache or redis-server) in one write, reads the replies, and
// deletes the keys the target acknowledged unless COPY. Replies and errors as Redis 7.0's
// (NOKEY, IOERR, "Target instance replied with error: ...").
//
// It runs on a worker holding the keys' locks (a plain write: Call erases the keys from the
// cache), never on a network thread. The connection is blocking with the timeout (ms) on the
// connect and on every send and receive, so a worker is held at most about 3 x timeout; the
// connection is opened per call (Redis caches it for 10 s; nothing here depends on it).
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "config/config.h"
#include "server/clock.h"
#include "server/commands/args.h"
#include "server/commands/command.h"
#include "server/commands/dump.h"
#include "server/protocol/reply.h"
#include "server/pubsub/notify.h"
#include "storage/store.h"

namespace rockcache::server {
namespace {

// A blocking TCP connection to the target, closed on destruction.
class TargetConnection {
 public:
  TargetConnection() = default;
  TargetConnection(const TargetConnection&) = delete;
  TargetConnection& operator=(const TargetConnection&) = delete;
  ~TargetConnection() {
    if (fd_ >= 0) close(fd_);
  }

  enum class ConnectResult {
    kConnected,
    // Resolution failed, or connect() failed at once: Redis's "connecting to the client".
    kFailed,
    // connect() was under way and then failed or timed out: Redis takes the socket as connected
    // and its first write fails ("writing to target instance").
    kBroken,
  };
  // Connects within timeout_ms. The port is read as atoi reads it (Redis does: "x" is port 0).
  ConnectResult Connect(const std::string& host, const std::string& port, int64_t timeout_ms) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* result = nullptr;
    const std::string service = std::to_string(std::atoi(port.c_str()));
    if (getaddrinfo(host.c_str(), service.c_str(), &hints, &result) != 0) {
      return ConnectResult::kFailed;
    }
    ConnectResult outcome = ConnectResult::kFailed;
    for (addrinfo* ai = result; ai != nullptr; ai = ai->ai_next) {
      fd_ = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
      if (fd_ < 0) continue;
      outcome = ConnectOne(ai, timeout_ms);
      if (outcome != ConnectResult::kFailed) break;
      close(fd_);
      fd_ = -1;
    }
    freeaddrinfo(result);
    if (outcome != ConnectResult::kConnected) return outcome;
    timeval tv{};
    tv.tv_sec = timeout_ms / 1000;
    tv.tv_usec = static_cast<suseconds_t>((timeout_ms % 1000) * 1000);
    setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    return outcome;
  }

  bool SendAll(std::string_view bytes) {
    while (!bytes.empty()) {
      ssize_t n = send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      bytes.remove_prefix(static_cast<size_t>(n));
    }
    return true;
  }

  // One reply line without its CRLF (the target answers these commands with +OK or -ERR ...).
  bool ReadLine(std::string* line) {
    line->clear();
    for (;;) {
      size_t eol = buffer_.find("\r\n");
      if (eol != std::string::npos) {
        line->assign(buffer_, 0, eol);
        buffer_.erase(0, eol + 2);
        return true;
      }
      if (buffer_.size() > (1u << 20)) return false;  // no reply line is that long
      char chunk[4096];
      ssize_t n = recv(fd_, chunk, sizeof chunk, 0);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      buffer_.append(chunk, static_cast<size_t>(n));
    }
  }

 private:
  ConnectResult ConnectOne(addrinfo* ai, int64_t timeout_ms) {
    const int flags = fcntl(fd_, F_GETFL, 0);
    fcntl(fd_, F_SETFL, flags | O_NONBLOCK);
    if (connect(fd_, ai->ai_addr, ai->ai_addrlen) != 0) {
      if (errno != EINPROGRESS) return ConnectResult::kFailed;
      pollfd pfd{fd_, POLLOUT, 0};
      if (poll(&pfd, 1, static_cast<int>(timeout_ms)) != 1) return ConnectResult::kBroken;
      int error = 0;
      socklen_t len = sizeof error;
      if (getsockopt(fd_, SOL_SOCKET, SO_ERROR, &error, &len) != 0 || error != 0) {
        return ConnectResult::kBroken;
      }
    }
    fcntl(fd_, F_SETFL, flags);
    return ConnectResult::kConnected;
  }

  int fd_ = -1;
  std::string buffer_;
};

void AppendRequest(std::string* out, const std::vector<std::string_view>& args) {
  AppendArrayHeader(out, static_cast<int64_t>(args.size()));
  for (auto arg : args) AppendBulk(out, arg);
}

// The index of the first key: 3 (argv[3]), or the argument after KEYS; 0 on a syntax error the
// handler reports.
size_t FirstKey(const Args& argv) {
  for (size_t j = 6; j < argv.size(); ++j) {
    if (Is(argv[j], "KEYS")) return j + 1;
    if (Is(argv[j], "AUTH")) {
      ++j;
    } else if (Is(argv[j], "AUTH2")) {
      j += 2;
    }
  }
  return 3;
}

std::vector<std::string_view> MigrateKeys(const Args& argv) {
  std::vector<std::string_view> keys;
  if (argv.size() < 6) return keys;
  const size_t first = FirstKey(argv);
  if (first == 3) {
    if (!argv[3].empty()) keys.emplace_back(argv[3]);
    return keys;
  }
  for (size_t j = first; j < argv.size(); ++j) keys.emplace_back(argv[j]);
  return keys;
}

void Migrate(CommandContext& ctx, Args& argv, std::string* out) {
  bool copy = false, replace = false;
  const std::string* username = nullptr;
  const std::string* password = nullptr;
  size_t first_key = 3, num_keys = 1;
  for (size_t j = 6; j < argv.size(); ++j) {
    const size_t more = argv.size() - 1 - j;
    if (Is(argv[j], "COPY")) {
      copy = true;
    } else if (Is(argv[j], "REPLACE")) {
      replace = true;
    } else if (Is(argv[j], "AUTH")) {
      if (more < 1) return out->append(kReplySyntaxError), void();
      password = &argv[++j];
    } else if (Is(argv[j], "AUTH2")) {
      if (more < 2) return out->append(kReplySyntaxError), void();
      username = &argv[++j];
      password = &argv[++j];
    } else if (Is(argv[j], "KEYS")) {
      if (!argv[3].empty()) {
        return AppendError(out,
                           "ERR When using MIGRATE KEYS option, the key argument must be set to "
                           "the empty string");
      }
      first_key = j + 1;
      num_keys = argv.size() - j - 1;
      break;
    } else {
      return out->append(kReplySyntaxError), void();
    }
  }
  int64_t timeout = 0, db = 0;
  if (!ParseInteger(argv[5], &timeout) || !ParseInteger(argv[4], &db)) {
    return out->append(kReplyNotInteger), void();
  }
  if (timeout <= 0) timeout = 1000;

  // The keys that are here, with their payloads and TTLs.
  struct Item {
    const std::string* key;
    std::string payload;
    int64_t ttl_ms;
  };
  std::vector<Item> items;
  const int64_t now = NowUnixMs();
  const rdb::EncodingLimits limits = DumpLimits(ctx.config());
  for (size_t j = 0; j < num_keys; ++j) {
    const std::string& key = argv[first_key + j];
    auto value = ctx.store->ReadValue(key);
    if (!value.ok()) return AppendStatusError(out, value.status());
    if (!value->has_value()) continue;
    int64_t ttl = 0;
    if ((*value)->expire_at_ms != 0) {
      ttl = (*value)->expire_at_ms - now;
      if (ttl < 0) continue;
      if (ttl < 1) ttl = 1;
    }
    items.push_back(Item{&key, rdb::DumpPayload(**value, limits), ttl});
  }
  if (items.empty()) return AppendSimple(out, "NOKEY");

  std::string request;
  const std::string db_text = std::to_string(db);
  if (password != nullptr) {
    if (username != nullptr) {
      AppendRequest(&request, {"AUTH", *username, *password});
    } else {
      AppendRequest(&request, {"AUTH", *password});
    }
  }
  AppendRequest(&request, {"SELECT", db_text});
  for (const auto& item : items) {
    const std::string ttl_text = std::to_string(item.ttl_ms);
    std::vector<std::string_view> args = {"RESTORE", *item.key, ttl_text, item.payload};
    if (replace) args.emplace_back("REPLACE");
    AppendRequest(&request, args);
  }

  TargetConnection target;
  const auto connected = target.Connect(argv[1], argv[2], timeout);
  if (connected == TargetConnection::ConnectResult::kFailed) {
    return AppendError(out, "IOERR error or timeout connecting to the client");
  }
  if (connected == TargetConnection::ConnectResult::kBroken || !target.SendAll(request)) {
    return AppendError(out, "IOERR error or timeout writing to target instance");
  }
  std::string line;
  bool error_from_target = false;
  auto read_error = [&] { AppendError(out, "IOERR error or timeout reading to target instance"); };
  if (password != nullptr) {
    if (!target.ReadLine(&line)) return read_error();
    if (!line.empty() && line[0] == '-') {
      return AppendError(out, "ERR Target instance replied with error: " + line.substr(1));
    }
  }
  if (!target.ReadLine(&line)) return read_error();
  if (!line.empty() && line[0] == '-') {
    return AppendError(out, "ERR Target instance replied with error: " + line.substr(1));
  }
  std::string first_error;
  for (const auto& item : items) {
    if (!target.ReadLine(&line)) {
      // Keys acknowledged so far were deleted; Redis reports the socket error.
      if (!error_from_target) return read_error();
      break;
    }
    if (!line.empty() && line[0] == '-') {
      if (!error_from_target) first_error = line.substr(1);
      error_from_target = true;
      continue;
    }
    if (!copy) {
      auto removed = ctx.store->Del({std::string_view(*item.key)});
      if (!removed.ok()) return AppendStatusError(out, removed.status());
      if (*removed > 0) NotifyKeyspaceEvent(ctx, kNotifyGeneric, "del", *item.key);
    }
  }
  if (error_from_target) {
    return AppendError(out, "ERR Target instance replied with error: " + first_error);
  }
  out->append(kReplyOk);
}

}  // namespace

// clang-format off
const std::vector<CommandSpec> kMigrateCommands = {
    {"migrate", -6, kWrite, 3, 3, 1, Migrate, nullptr, nullptr, MigrateKeys},
};
// clang-format on

}  // namespace rockcache::server
