#include "tests/support/test_server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

namespace rockcache::testing {

std::string ServerBinary() {
  const char* env = std::getenv("ROCKCACHE_SERVER");
  return env != nullptr ? env : "build/rockcache-server";
}

namespace {

// Test servers listen on 20000-31999, below the kernel's ephemeral range (32768 and up), so no
// client connection's local port can take one. The range is split into blocks; each test process
// holds one block for its lifetime (an flock, released by the kernel when the process exits, even
// by SIGKILL), so test processes running side by side (scripts/run-tests.sh with TEST_JOBS) never
// hand out the same port, and within a process the ports go round the block before one is reused.
constexpr int kFirstTestPort = 20000;
constexpr int kPortBlockSize = 400;
constexpr int kPortBlocks = 30;

// The block this process holds, or -1 when every block is taken (then the kernel picks ports).
int ClaimPortBlock() {
  const std::string dir = "/tmp/rockcache-test-ports";
  mkdir(dir.c_str(), 0777);
  for (int block = 0; block < kPortBlocks; ++block) {
    std::string path = dir + "/" + std::to_string(block) + ".lock";
    int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (fd < 0) continue;
    if (flock(fd, LOCK_EX | LOCK_NB) == 0) return block;  // fd stays open: the lock is held
    close(fd);
  }
  return -1;
}

// Whether a listener could bind 127.0.0.1:port now (0: any port; *bound gets the one bound).
bool CanBind(int port, int* bound) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  bool ok = bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  if (ok) {
    socklen_t len = sizeof(addr);
    getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    *bound = ntohs(addr.sin_port);
  }
  close(fd);
  return ok;
}

}  // namespace

int FreePort() {
  static const int block = ClaimPortBlock();
  static std::atomic<int> next{0};
  int port = 0;
  if (block >= 0) {
    for (int tries = 0; tries < kPortBlockSize; ++tries) {
      int candidate = kFirstTestPort + block * kPortBlockSize + next.fetch_add(1) % kPortBlockSize;
      if (CanBind(candidate, &port)) return port;
    }
  }
  REQUIRE(CanBind(0, &port));
  return port;
}

std::string MakeTempDir() {
  char pattern[] = "/tmp/rockcache-test-XXXXXX";
  char* dir = mkdtemp(pattern);
  REQUIRE(dir != nullptr);
  return dir;
}

void RemoveTree(const std::string& path) {
  if (path.rfind("/tmp/rockcache-test-", 0) != 0) return;  // never anything else
  std::string cmd = "rm -rf '" + path + "'";
  int rc = std::system(cmd.c_str());
  (void)rc;
}

TestServer::TestServer(std::vector<std::string> extra_args, std::string dir)
    : args_(std::move(extra_args)), dir_(std::move(dir)) {
  if (dir_.empty()) dir_ = MakeTempDir();
  log_path_ = dir_ + ".log";
  port_ = FreePort();
  try {
    Launch();
  } catch (...) {
    // The destructor does not run when the constructor throws: clean up here.
    if (!keep_dir_) {
      RemoveTree(dir_);
      std::remove(log_path_.c_str());
    }
    throw;
  }
}

TestServer::~TestServer() {
  Stop();
  if (!keep_dir_) {
    RemoveTree(dir_);
    std::remove(log_path_.c_str());
  }
}

void TestServer::Launch() {
  // No metrics port by default: parallel servers would all want 9121. Tests of /metrics pass
  // --metrics-port themselves (a later flag wins).
  std::vector<std::string> argv = {ServerBinary(), "--port",         std::to_string(port_),
                                   "--dir",        dir_ + "/db",     "--bind",
                                   "127.0.0.1",    "--metrics-port", "0"};
  argv.insert(argv.end(), args_.begin(), args_.end());
  pid_ = fork();
  REQUIRE(pid_ >= 0);
  if (pid_ == 0) {
    int log = open(log_path_.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    dup2(log, 1);
    dup2(log, 2);
    std::vector<char*> cargv;
    for (auto& a : argv) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    execv(cargv[0], cargv.data());
    _exit(127);
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      FAIL("server exited during start-up:\n" << Log());
    }
    redisContext* c = redisConnect("127.0.0.1", port_);
    bool up = c != nullptr && c->err == 0;
    if (c) redisFree(c);
    if (up) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  // Never leave the process behind.
  kill(pid_, SIGKILL);
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = -1;
  FAIL("server did not accept connections within 20 s:\n" << Log());
}

int TestServer::WaitExit(int timeout_ms) {
  if (pid_ <= 0) return -1;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return -1;
}

int TestServer::Stop() {
  if (pid_ <= 0) return -1;
  int status = 0;
  if (waitpid(pid_, &status, WNOHANG) == pid_) {
    // It died before we asked: show why (a crash, a sanitizer report) before the log is removed.
    pid_ = -1;
    std::string log = Log();
    std::fprintf(stderr,
                 "rockcache-server on port %d exited by itself (status %d); log tail:\n%s\n", port_,
                 status, log.substr(log.size() > 30000 ? log.size() - 30000 : 0).c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  kill(pid_, SIGTERM);
  int code = WaitExit(20000);
  if (code == -1 && pid_ > 0) {
    kill(pid_, SIGKILL);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
  }
  return code;
}

void TestServer::Kill9() {
  if (pid_ <= 0) return;
  kill(pid_, SIGKILL);
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = -1;
}

void TestServer::Restart() {
  Stop();
  Launch();
}

std::string TestServer::Log() const {
  std::ifstream in(log_path_);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

namespace {

Reply Flatten(const redisReply* r) {
  Reply out;
  out.type = r->type;
  switch (r->type) {
    case REDIS_REPLY_STRING:
    case REDIS_REPLY_STATUS:
    case REDIS_REPLY_ERROR:
      out.str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_INTEGER:
      out.integer = r->integer;
      break;
    case REDIS_REPLY_ARRAY:
      for (size_t i = 0; i < r->elements; ++i) out.elements.push_back(Flatten(r->element[i]));
      break;
    default:
      break;
  }
  return out;
}

}  // namespace

Client::Client(int port, int timeout_ms) {
  timeval tv{timeout_ms / 1000, (timeout_ms % 1000) * 1000};
  ctx_ = redisConnectWithTimeout("127.0.0.1", port, tv);
  if (ctx_ != nullptr && ctx_->err == 0) redisSetTimeout(ctx_, tv);
}

Client::~Client() {
  if (ctx_) redisFree(ctx_);
}

bool Client::connected() const { return ctx_ != nullptr && ctx_->err == 0; }

bool Client::TryCommand(const std::vector<std::string>& args, Reply* reply) {
  Append(args);
  return GetReply(reply);
}

namespace {
// Catch2's assertion and INFO machinery is not thread-safe: a REQUIRE or INFO on a helper
// thread races the main thread's and corrupts the heap. Static initialisation runs on the main
// thread, so this is its id.
const std::thread::id kMainThread = std::this_thread::get_id();
}  // namespace

Reply Client::Command(const std::vector<std::string>& args) {
  Reply reply;
  bool ok = TryCommand(args, &reply);
  if (std::this_thread::get_id() != kMainThread) {
    if (!ok) {  // no Catch here: an error reply the thread's own checks will report
      reply = Reply();
      reply.type = REDIS_REPLY_ERROR;
      reply.str = std::string("I/O error: ") + (ctx_ ? ctx_->errstr : "no connection");
    }
    return reply;
  }
  INFO("command " << (args.empty() ? "" : args[0]) << ": " << (ctx_ ? ctx_->errstr : "no ctx"));
  REQUIRE(ok);
  return reply;
}

void Client::Append(const std::vector<std::string>& args) {
  if (ctx_ == nullptr) return;
  std::vector<const char*> argv;
  std::vector<size_t> lens;
  for (const auto& a : args) {
    argv.push_back(a.data());
    lens.push_back(a.size());
  }
  redisAppendCommandArgv(ctx_, static_cast<int>(args.size()), argv.data(), lens.data());
}

bool Client::GetReply(Reply* reply) {
  void* raw = nullptr;
  if (!connected() || redisGetReply(ctx_, &raw) != REDIS_OK || raw == nullptr) return false;
  *reply = Flatten(static_cast<redisReply*>(raw));
  freeReplyObject(raw);
  return true;
}

std::string Str(const Reply& r) {
  switch (r.type) {
    case REDIS_REPLY_NIL:
      return "(nil)";
    case REDIS_REPLY_INTEGER:
      return std::to_string(r.integer);
    case REDIS_REPLY_ARRAY:
      return "(array of " + std::to_string(r.elements.size()) + ")";
    default:
      return r.str;
  }
}

RawConnection::RawConnection(int port) {
  fd_ = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  REQUIRE(connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
}

RawConnection::~RawConnection() {
  if (fd_ >= 0) close(fd_);
}

void RawConnection::Send(const std::string& bytes) {
  size_t sent = 0;
  while (sent < bytes.size()) {
    ssize_t n = send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return;
    sent += static_cast<size_t>(n);
  }
}

std::string RawConnection::ReadExactly(size_t bytes, int timeout_ms) {
  std::string out;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  char buf[65536];
  while (out.size() < bytes) {
    int left = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                    deadline - std::chrono::steady_clock::now())
                                    .count());
    if (left <= 0) break;
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, left) <= 0) break;
    ssize_t n = recv(fd_, buf, std::min(sizeof(buf), bytes - out.size()), 0);
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

bool RawConnection::WaitClosed(std::string* received, int timeout_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  char buf[65536];
  while (true) {
    int left = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                    deadline - std::chrono::steady_clock::now())
                                    .count());
    if (left <= 0) return false;
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, left) <= 0) return false;
    ssize_t n = recv(fd_, buf, sizeof(buf), 0);
    if (n == 0) return true;
    if (n < 0) return errno == ECONNRESET;
    if (received) received->append(buf, static_cast<size_t>(n));
  }
}

std::string RunShell(const std::string& command, int* exit_code) {
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), pipe)) > 0) out.append(buf, n);
  int status = pclose(pipe);
  if (exit_code) *exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

}  // namespace rockcache::testing
