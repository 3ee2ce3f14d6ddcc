// LinkIo: the replication link's socket I/O for the dedicated replication threads (never a
// network loop's): poll() with timeouts over a socket, a read buffer, line and exact reads,
// and a `stop` predicate checked at least every 100 ms so REPLICAOF and shutdown end a link
// promptly. One thread per LinkIo; Shutdown() may be called from any thread.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "server/protocol/resp_parser.h"

namespace rockcache::server::replication {

// Connects to host:port within timeout_ms; a blocking-free socket (O_NONBLOCK) or -1.
int ConnectTcp(const std::string& host, int port, int timeout_ms);

class LinkIo {
 public:
  using Stop = std::function<bool()>;
  // Takes ownership of fd (closed by Close() or the destructor). Makes it non-blocking.
  explicit LinkIo(int fd);
  ~LinkIo() { Close(); }
  LinkIo(const LinkIo&) = delete;
  LinkIo& operator=(const LinkIo&) = delete;

  // Writes all of `data`; false on error, when stop() turns true, or after `stall_ms` without
  // progress (0: no such limit; stop() decides).
  bool WriteAll(std::string_view data, const Stop& stop, int64_t stall_ms = kWriteStallMs);
  static constexpr int64_t kWriteStallMs = 60000;
  // Reads a "\r\n"-terminated line (without it); false on error, EOF, stop or timeout.
  bool ReadLine(std::string* line, int timeout_ms, const Stop& stop);
  // Reads exactly n bytes into out.
  bool ReadExact(char* out, size_t n, int timeout_ms, const Stop& stop);
  // Waits up to timeout_ms for bytes and reads what is there: 1 read something, 0 nothing yet,
  // -1 error or EOF.
  int Fill(int timeout_ms);
  // As Fill, but returns 1 at once when the buffer already holds unread bytes.
  int FillIfEmpty(int timeout_ms) { return in_.size() > pos_ ? 1 : Fill(timeout_ms); }
  // The bytes read from the socket and not taken yet (valid until the next call).
  std::string_view Unread() const { return std::string_view(in_).substr(pos_); }
  // Takes one complete RESP command from the buffer (the primary reading acknowledgements).
  bool TakeResp(std::vector<std::string>* args);
  // Waits until the peer closes (or stop / timeout).
  void WaitClosed(const Stop& stop, int64_t timeout_ms);
  bool bad() const { return bad_; }
  // Any thread: makes blocked reads and writes fail at once.
  void Shutdown();
  void Close();

 private:
  void Compact();

  std::atomic<int> fd_;
  std::string in_;
  size_t pos_ = 0;
  bool bad_ = false;
  RespParser parser_;
};

}  // namespace rockcache::server::replication
