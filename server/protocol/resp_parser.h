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
//
// Memory: a declared length is checked before anything is allocated for it (proto-max-bulk-len;
// for an unauthenticated client Redis's caps of 10 arguments and 16384-byte bulks), and at most
// kReserveArgs of the declared argument count are reserved up front, so a header alone costs
// next to nothing.
// held_bytes() is what the command in progress holds so far; the caller adds it to the unparsed
// bytes and enforces client-query-buffer-limit on the sum.
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
  // Most arguments one multibulk command may declare (Redis 7.0: INT_MAX; we keep the same).
  static constexpr int64_t kMaxMultibulkLen = 2147483647;
  // Redis's limits for a client that has not authenticated yet (CVE-2021-32675).
  static constexpr int64_t kMaxUnauthenticatedArgs = 10;
  static constexpr int64_t kMaxUnauthenticatedBulk = 16384;
  // What held_bytes() charges per argument on top of its bytes (the string object), so that
  // `*2000000000` followed by endless `$0` counts against the query-buffer limit too.
  static constexpr uint64_t kArgOverhead = sizeof(std::string);
  // Arguments reserved up front at most (the rest grow as they arrive).
  static constexpr size_t kReserveArgs = 8;

  explicit RespParser(uint64_t max_bulk_len = 512ull * 1024 * 1024) : max_bulk_len_(max_bulk_len) {}

  // Parses from data[0, len). Sets *consumed to the bytes used (also on kNeedMore, where they are
  // kept internally). On kCommand, replaces *args with the command and keeps the vector *args
  // held before (its strings' memory is reused for later commands: pass the same vector again
  // to parse without allocating). On kError, error() says why.
  Result Parse(const char* data, size_t len, size_t* consumed, std::vector<std::string>* args);

  // proto-max-bulk-len; applies to bulks whose header is parsed afterwards.
  void set_max_bulk_len(uint64_t max_bulk_len) { max_bulk_len_ = max_bulk_len; }
  // While set, headers past Redis's unauthenticated limits are errors.
  void set_unauthenticated(bool unauthenticated) { unauthenticated_ = unauthenticated; }
  // Bytes held for the command in progress: its complete and partial arguments (each charged
  // kArgOverhead more) and a partial header or inline line.
  uint64_t held_bytes() const { return held_bytes_ + line_.size(); }
  // True while a command is partially parsed (some of its bytes consumed).
  bool in_command() const { return state_ != State::kIdle; }
  const std::string& error() const { return error_; }

 private:
  enum class State { kIdle, kMultibulkCount, kBulkHeader, kBulkBody, kInline };

  Result Fail(const std::string& message);
  // In state kIdle with data[0] == '*': parses a command that lies whole and well formed in
  // data[0, len) in one pass, as the state machine would, and hands it over as Parse does.
  // False when it does not (split, malformed, over a limit), with *consumed untouched and the
  // parser still idle: the state machine then reads the same bytes (and reports any error).
  bool ParseWhole(const char* data, size_t len, size_t* consumed, std::vector<std::string>* args);

  State state_ = State::kIdle;
  uint64_t max_bulk_len_;
  bool unauthenticated_ = false;
  uint64_t held_bytes_ = 0;           // arguments of the command in progress (see held_bytes())
  int64_t args_left_ = 0;             // bulks still expected in the current multibulk
  uint64_t bulk_left_ = 0;            // body bytes (plus CRLF) still expected in the current bulk
  std::string line_;                  // partial header or inline line
  std::vector<std::string> pending_;  // [0, pending_count_) are the current command's arguments
  size_t pending_count_ = 0;
  std::string error_;
};

}  // namespace rockcache::server
