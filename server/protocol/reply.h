// RESP2 reply writers: each appends one reply (or an array header) to a byte string. Pure,
// any thread. Handlers build replies with these and never write "\r\n" by hand.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "config/status.h"

namespace rockcache::server {

// Frequently used full replies.
inline constexpr std::string_view kReplyOk = "+OK\r\n";
inline constexpr std::string_view kReplyNullBulk = "$-1\r\n";
inline constexpr std::string_view kReplyNullArray = "*-1\r\n";
inline constexpr std::string_view kReplyWrongType =
    "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n";
inline constexpr std::string_view kReplySyntaxError = "-ERR syntax error\r\n";
inline constexpr std::string_view kReplyBusy =
    "-BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.\r\n";
inline constexpr std::string_view kReplyNotInteger =
    "-ERR value is not an integer or out of range\r\n";

// "+text\r\n". REQUIRES: text has no CR or LF.
void AppendSimple(std::string* out, std::string_view text);
// "-<text>\r\n"; `text` starts with the error code ("ERR ...", "WRONGTYPE ..."). CR and LF in
// it are replaced by spaces, as Redis does, so an error never breaks the protocol.
void AppendError(std::string* out, std::string_view text);
// The reply for a non-ok Status: -WRONGTYPE for kWrongType, else "-ERR <message>".
void AppendStatusError(std::string* out, const Status& status);
void AppendInteger(std::string* out, int64_t value);
void AppendBulk(std::string* out, std::string_view value);
// Bulk or null bulk.
void AppendOptionalBulk(std::string* out, const std::optional<std::string>& value);
void AppendArrayHeader(std::string* out, int64_t count);
// True when the reply bytes start with a null bulk ("$-1") or a null array ("*-1").
inline bool IsNilReply(const char* reply, size_t length) {
  return length >= 3 && (reply[0] == '$' || reply[0] == '*') && reply[1] == '-' && reply[2] == '1';
}

}  // namespace rockcache::server
