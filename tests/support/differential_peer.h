// Helpers for the differential test: a reference redis-server started on a free port and a raw
// RESP connection that returns each reply as the exact bytes the server sent.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace rockcache::testing {

// A redis-server child process: `--save '' --appendonly no --port <free> --bind 127.0.0.1`,
// stopped (SIGTERM, then SIGKILL) by its pid in the destructor.
class ReferenceRedis {
 public:
  // The path of an installed redis-server, or "" when there is none.
  static std::string Binary();

  explicit ReferenceRedis(const std::string& binary);  // REQUIREs it to accept connections
  ~ReferenceRedis();
  ReferenceRedis(const ReferenceRedis&) = delete;
  ReferenceRedis& operator=(const ReferenceRedis&) = delete;

  int port() const { return port_; }

 private:
  int port_ = 0;
  pid_t pid_ = -1;
  std::string dir_;
};

// A blocking RESP connection (RESP2 until a HELLO 3 is sent through it): Call sends one command
// and returns its whole reply, raw.
class RespPeer {
 public:
  // REQUIREs the connection. `asserting` false: for threads other than the test's (Catch2's
  // assertions are not thread-safe), a failure aborts the process instead.
  explicit RespPeer(int port, bool asserting = true);
  ~RespPeer();
  RespPeer(const RespPeer&) = delete;
  RespPeer& operator=(const RespPeer&) = delete;

  // REQUIREs a complete reply within the timeout (30 s unless set_timeout_s says otherwise).
  std::string Call(const std::vector<std::string>& args);
  // For a test whose commands are heavy enough to pass 30 s on a loaded machine.
  void set_timeout_s(int seconds) { timeout_s_ = seconds; }
  // Sends every command in one write (one pipeline), then returns their replies, raw, in order.
  std::vector<std::string> CallPipelined(const std::vector<std::vector<std::string>>& commands);
  // Sends raw bytes / one command without reading anything back.
  void Send(const std::string& request);
  void SendCommand(const std::vector<std::string>& args);
  // The next whole frame the server sent (a reply or a push), raw. REQUIREs it within the
  // timeout.
  std::string ReadReply();

 private:
  // The end of the reply that starts at `pos` in buffer_, or npos when it is incomplete.
  size_t ReplyEnd(size_t pos) const;

  void Check(bool ok);

  const bool asserting_ = true;
  int timeout_s_ = 30;
  int fd_ = -1;
  std::string buffer_;
};

}  // namespace rockcache::testing
