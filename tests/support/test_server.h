// TestServer: starts the real build/rockcache-server on a free loopback port with a temporary
// data directory, and stops it by its pid. The binary comes from $ROCKCACHE_SERVER (set by the
// Makefile), else build/rockcache-server.
//
// Also: Client, a hiredis connection with helpers that return replies as easy-to-assert values,
// and RawConnection for byte-exact protocol tests.
#pragma once

#include <hiredis/hiredis.h>
#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

namespace rockcache::testing {

std::string ServerBinary();
// A TCP port on 127.0.0.1 that nothing listens on right now.
int FreePort();
// A new empty directory under /tmp; removed by RemoveTree.
std::string MakeTempDir();
void RemoveTree(const std::string& path);

class TestServer {
 public:
  // Starts the server with `--port <free> --dir <tmp> --bind 127.0.0.1` plus `extra_args`
  // ("--name", "value", ...), and waits until it accepts connections (REQUIREs it within 20 s).
  explicit TestServer(std::vector<std::string> extra_args = {}, std::string dir = "");
  ~TestServer();  // Stop(), then removes the data dir unless keep_dir()
  TestServer(const TestServer&) = delete;
  TestServer& operator=(const TestServer&) = delete;

  // SIGTERM, then waits up to 20 s (SIGKILL after that). Returns the exit status (waitpid).
  int Stop();
  // SIGKILL and reap: a crash.
  void Kill9();
  // Starts the binary again on the same port and dir with the same arguments.
  void Restart();
  // Waits for the process to exit by itself (e.g. after SHUTDOWN); returns its exit code or -1.
  int WaitExit(int timeout_ms);
  bool running() const { return pid_ > 0; }

  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  const std::string& dir() const { return dir_; }
  void set_keep_dir(bool keep) { keep_dir_ = keep; }
  // What the server wrote to stdout/stderr so far.
  std::string Log() const;

 private:
  void Launch();
  std::vector<std::string> args_;
  std::string dir_;
  std::string log_path_;
  int port_ = 0;
  pid_t pid_ = -1;
  bool keep_dir_ = false;
};

// A reply flattened for assertions.
struct Reply {
  int type = 0;           // REDIS_REPLY_*
  std::string str;        // STRING, STATUS, ERROR
  long long integer = 0;  // INTEGER
  std::vector<Reply> elements;
  bool is_nil() const { return type == REDIS_REPLY_NIL; }
  bool is_error() const { return type == REDIS_REPLY_ERROR; }
};

class Client {
 public:
  explicit Client(int port, int timeout_ms = 10000);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  bool connected() const;
  // Runs one command (binary-safe arguments). REQUIREs a reply (no I/O error); on a thread other
  // than the test's main one (Catch is not thread-safe) an I/O error becomes an error reply.
  Reply Command(const std::vector<std::string>& args);
  // Same, but returns false instead of failing on an I/O error (e.g. connection closed).
  bool TryCommand(const std::vector<std::string>& args, Reply* reply);
  // Pipelining: Append many, then GetReply for each.
  void Append(const std::vector<std::string>& args);
  bool GetReply(Reply* reply);
  redisContext* context() { return ctx_; }

 private:
  redisContext* ctx_ = nullptr;
};

// Convenience: Client.Command and check the simple forms.
std::string Str(const Reply& r);  // STRING/STATUS/ERROR text, "(nil)" for nil, number for int

// A plain socket, for raw protocol bytes.
class RawConnection {
 public:
  explicit RawConnection(int port);
  ~RawConnection();
  void Send(const std::string& bytes);
  // Reads until `bytes` bytes arrived, the peer closed, or timeout. Returns what arrived.
  std::string ReadExactly(size_t bytes, int timeout_ms = 10000);
  // Reads until the peer closes or timeout; true when it closed.
  bool WaitClosed(std::string* received, int timeout_ms = 10000);

 private:
  int fd_ = -1;
};

// Runs a shell command, returns its stdout; *exit_code gets its exit status.
std::string RunShell(const std::string& command, int* exit_code = nullptr);

}  // namespace rockcache::testing
