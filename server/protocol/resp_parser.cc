#include "server/protocol/resp_parser.h"

#include <cstring>
#include <string_view>

#include "config/split_args.h"

namespace rockcache::server {
namespace {

// Redis's string2ll strictness for headers: optional '-', digits, no spaces.
bool ParseHeaderNumber(std::string_view s, int64_t* out) {
  if (s.empty() || s.size() > 20) return false;
  size_t i = 0;
  bool neg = false;
  if (s[0] == '-') {
    neg = true;
    i = 1;
    if (s.size() == 1) return false;
  }
  uint64_t v = 0;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    uint64_t next = v * 10 + static_cast<uint64_t>(s[i] - '0');
    if (next / 10 != v || next > static_cast<uint64_t>(INT64_MAX)) return false;
    v = next;
  }
  *out = neg ? -static_cast<int64_t>(v) : static_cast<int64_t>(v);
  return true;
}

// The digits of a header at data[*pos] up to its "\r\n", at most kMaxDigits of them: advances
// *pos past the CRLF. False for anything else (a sign, an LF alone, more digits, the end of the
// input), which the state machine then reads as it always does.
bool ReadWholeHeaderNumber(const char* data, size_t len, size_t* pos, uint64_t* out) {
  constexpr size_t kMaxDigits = 18;  // no overflow below 10^18
  size_t p = *pos;
  const size_t end = p + kMaxDigits < len ? p + kMaxDigits : len;
  uint64_t v = 0;
  for (; p < end && data[p] >= '0' && data[p] <= '9'; ++p) {
    v = v * 10 + static_cast<uint64_t>(data[p] - '0');
  }
  if (p == *pos || p + 1 >= len || data[p] != '\r' || data[p + 1] != '\n') return false;
  *pos = p + 2;
  *out = v;
  return true;
}

}  // namespace

bool RespParser::ParseWhole(const char* data, size_t len, size_t* consumed,
                            std::vector<std::string>* args) {
  size_t pos = 1;  // past '*'
  uint64_t count = 0;
  if (!ReadWholeHeaderNumber(data, len, &pos, &count) || count == 0 ||
      count > static_cast<uint64_t>(kMaxMultibulkLen)) {
    return false;
  }
  if (unauthenticated_ && count > static_cast<uint64_t>(kMaxUnauthenticatedArgs)) return false;
  // Each argument takes at least 6 bytes ("$0\r\n\r\n"): a count the input cannot hold is left to
  // the state machine before anything is reserved for it.
  if (count > (len - pos) / 6) return false;
  if (pending_.size() > 1024) std::vector<std::string>().swap(pending_);
  // Strings are added as arguments are read (as the state machine does), so input that turns
  // out malformed has allocated no more than the arguments before the fault.
  for (uint64_t i = 0; i < count; ++i) {
    if (pos >= len || data[pos] != '$') return false;
    ++pos;
    uint64_t bulk_len = 0;
    if (!ReadWholeHeaderNumber(data, len, &pos, &bulk_len) || bulk_len > max_bulk_len_ ||
        (unauthenticated_ && bulk_len > static_cast<uint64_t>(kMaxUnauthenticatedBulk)) ||
        len - pos < bulk_len + 2) {
      return false;
    }
    if (i == pending_.size()) pending_.emplace_back();
    std::string& arg = pending_[i];
    if (arg.capacity() > 64 * 1024) std::string().swap(arg);  // don't keep a huge one
    arg.assign(data + pos, static_cast<size_t>(bulk_len));
    pos += bulk_len + 2;  // the body's CRLF is skipped unchecked, as Redis does
  }
  pending_.resize(static_cast<size_t>(count));
  args->swap(pending_);
  *consumed = pos;
  return true;
}

RespParser::Result RespParser::Fail(const std::string& message) {
  error_ = "Protocol error: " + message;
  state_ = State::kIdle;
  pending_count_ = 0;
  held_bytes_ = 0;
  line_.clear();
  return Result::kError;
}

RespParser::Result RespParser::Parse(const char* data, size_t len, size_t* consumed,
                                     std::vector<std::string>* args) {
  // A command that lies whole in the input (every command of a pipeline but a read's last)
  // is parsed in one pass; anything else goes through the state machine below from its start.
  if (state_ == State::kIdle && len > 0 && data[0] == '*' &&
      ParseWhole(data, len, consumed, args)) {
    return Result::kCommand;
  }
  size_t pos = 0;
  // Reads one CRLF- (or LF-) terminated line into `line`, without its terminator. A line that
  // is whole in `data` is viewed in place (no copy); a split one is collected in line_. Returns
  // false when more is needed.
  std::string_view line;
  auto read_line = [&](bool* too_big) -> bool {
    const char* start = data + pos;
    const char* nl = static_cast<const char*>(memchr(start, '\n', len - pos));
    if (nl == nullptr) {
      line_.append(start, len - pos);
      pos = len;
      *too_big = line_.size() > kMaxInlineSize;
      return false;
    }
    pos = static_cast<size_t>(nl - data) + 1;
    if (line_.empty()) {
      line = std::string_view(start, static_cast<size_t>(nl - start));
    } else {
      line_.append(start, nl - start);
      line = line_;
    }
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    *too_big = line.size() > kMaxInlineSize;
    return true;
  };

  while (pos < len) {
    switch (state_) {
      case State::kIdle:
        line_.clear();
        pending_count_ = 0;
        held_bytes_ = 0;
        // The vector handed back by the caller may hold a huge earlier command's strings:
        // keep only a modest one for reuse.
        if (pending_.size() > 1024) std::vector<std::string>().swap(pending_);
        state_ = data[pos] == '*' ? State::kMultibulkCount : State::kInline;
        if (state_ == State::kMultibulkCount) ++pos;
        break;

      case State::kInline: {
        bool too_big = false;
        bool complete = read_line(&too_big);
        if (too_big) return *consumed = pos, Fail("too big inline request");
        if (!complete) break;
        auto split = SplitArgs(line);
        line_.clear();
        state_ = State::kIdle;
        if (!split) return *consumed = pos, Fail("unbalanced quotes in request");
        if (split->empty()) break;  // empty line: Redis ignores it
        *args = std::move(*split);
        *consumed = pos;
        return Result::kCommand;
      }

      case State::kMultibulkCount: {
        bool too_big = false;
        bool complete = read_line(&too_big);
        if (too_big) return *consumed = pos, Fail("too big mbulk count string");
        if (!complete) break;
        int64_t count = 0;
        if (!ParseHeaderNumber(line, &count) || count > kMaxMultibulkLen) {
          return *consumed = pos, Fail("invalid multibulk length");
        }
        if (unauthenticated_ && count > kMaxUnauthenticatedArgs) {
          return *consumed = pos, Fail("unauthenticated multibulk length");
        }
        line_.clear();
        if (count <= 0) {  // "*0" or "*-1": an empty command, skipped as Redis does
          state_ = State::kIdle;
          break;
        }
        // Reserved only up to kReserveArgs (a header alone must cost next to nothing): a vector
        // handed to a worker comes back only through the loop's ArgsPool (args_pool.h), which
        // may have none, and a new one would grow 1, 2, 4 (three allocations for a SET).
        args_left_ = count;
        if (pending_.capacity() < kReserveArgs) {
          pending_.reserve(count < static_cast<int64_t>(kReserveArgs) ? static_cast<size_t>(count)
                                                                      : kReserveArgs);
        }
        state_ = State::kBulkHeader;
        break;
      }

      case State::kBulkHeader: {
        if (line_.empty() && data[pos] != '$') {
          return *consumed = pos, Fail(std::string("expected '$', got '") + data[pos] + "'");
        }
        bool too_big = false;
        bool complete = read_line(&too_big);
        if (too_big) return *consumed = pos, Fail("too big bulk count string");
        if (!complete) break;
        int64_t bulk_len = 0;
        if (!ParseHeaderNumber(line.substr(1), &bulk_len) || bulk_len < 0 ||
            static_cast<uint64_t>(bulk_len) > max_bulk_len_) {
          return *consumed = pos, Fail("invalid bulk length");
        }
        if (unauthenticated_ && bulk_len > kMaxUnauthenticatedBulk) {
          return *consumed = pos, Fail("unauthenticated bulk length");
        }
        line_.clear();
        held_bytes_ += kArgOverhead;
        // Reuse the strings of an earlier command (their capacity) when there are any.
        if (pending_count_ == pending_.size()) pending_.emplace_back();
        std::string& arg = pending_[pending_count_++];
        if (arg.capacity() > 64 * 1024) std::string().swap(arg);  // don't keep a huge one
        arg.clear();
        if (bulk_len >= 32 * 1024) {
          arg.reserve(static_cast<size_t>(bulk_len < (1 << 20) ? bulk_len : 1 << 20));
        }
        bulk_left_ = static_cast<uint64_t>(bulk_len) + 2;  // body and its CRLF
        state_ = State::kBulkBody;
        break;
      }

      case State::kBulkBody: {
        size_t avail = len - pos;
        size_t take = avail < bulk_left_ ? avail : static_cast<size_t>(bulk_left_);
        // Append body bytes only; the trailing CRLF is skipped (unchecked, as Redis does).
        uint64_t body_left = bulk_left_ > 2 ? bulk_left_ - 2 : 0;
        size_t body_take = take < body_left ? take : static_cast<size_t>(body_left);
        pending_[pending_count_ - 1].append(data + pos, body_take);
        held_bytes_ += body_take;
        pos += take;
        bulk_left_ -= take;
        if (bulk_left_ > 0) break;
        if (--args_left_ > 0) {
          state_ = State::kBulkHeader;
          break;
        }
        state_ = State::kIdle;
        held_bytes_ = 0;
        // Hand the command over and take the caller's previous vector back for reuse.
        pending_.resize(pending_count_);
        args->swap(pending_);
        pending_count_ = 0;
        *consumed = pos;
        return Result::kCommand;
      }
    }
  }
  *consumed = pos;
  return Result::kNeedMore;
}

}  // namespace rockcache::server
