// RespParser: an incremental RESP2 request parser (multibulk `*N\r\n$L\r\n...` and inline
// `PING\r\n` commands). Pure: it does no I/O and owns only the partial command it is building,
// so a request may arrive split at any byte. Binary safe.
//
// Use: append received bytes to a buffer, call Parse() on the unconsumed part until it returns
// kNeedMore, dropping `*consumed` bytes after each call. Bytes counted as consumed are kept inside
// the parser (partial arguments), so the caller never rescans them.
//
// Errors are Redis's ("Protocol error: invalid bulk length", ...); after kError the connection
// must be closed (Redis replies -ERR <error()> and closes). One parser per connection; not
// thread-safe (loop-thread only).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace rockcache::server {

class RespParser {
 public:
  enum class Result {
    kCommand,   // *args holds one complete command (at least one argument)
    kNeedMore,  // all of the input was consumed (or kept); call again with more bytes
    kError,     // protocol error; see error()
  };

  // Longest inline request or multibulk/bulk header line Redis accepts before a newline.
  static constexpr size_t kMaxInlineSize = 64 * 1024;
  // Most arguments one multibulk command may declare (Redis: INT_MAX; we keep the same).
  static constexpr int64_t kMaxMultibulkLen = 2147483647;

  explicit RespParser(uint64_t max_bulk_len = 512ull * 1024 * 1024) : max_bulk_len_(max_bulk_len) {}

  // Parses from data[0, len). Sets *consumed to the bytes used (also on kNeedMore, where they are
  // kept internally). On kCommand, replaces *args with the command and keeps the vector *args
  // held before (its strings' memory is reused for later commands: pass the same vector again
  // to parse without allocating). On kError, error() says why.
  Result Parse(const char* data, size_t len, size_t* consumed, std::vector<std::string>* args);

  // proto-max-bulk-len; applies to bulks whose header is parsed afterwards.
  void set_max_bulk_len(uint64_t max_bulk_len) { max_bulk_len_ = max_bulk_len; }
  // True while a command is partially parsed (some of its bytes consumed).
  bool in_command() const { return state_ != State::kIdle; }
  const std::string& error() const { return error_; }

 private:
  enum class State { kIdle, kMultibulkCount, kBulkHeader, kBulkBody, kInline };

  Result Fail(const std::string& message);

  State state_ = State::kIdle;
  uint64_t max_bulk_len_;
  int64_t args_left_ = 0;             // bulks still expected in the current multibulk
  uint64_t bulk_left_ = 0;            // body bytes (plus CRLF) still expected in the current bulk
  std::string line_;                  // partial header or inline line
  std::vector<std::string> pending_;  // [0, pending_count_) are the current command's arguments
  size_t pending_count_ = 0;
  std::string error_;
};

}  // namespace rockcache::server
