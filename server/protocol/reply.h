// Reply writers: each appends one reply (or an aggregate's header) to a byte string. Any thread.
// Handlers build replies with these and never write "\r\n" by hand.
//
// Protocol: the typed writers (AppendNull*, AppendMapHeader, AppendSetHeader, AppendDouble,
// AppendBool, AppendVerbatim, AppendPushHeader) write the RESP3 form when the thread is writing
// a reply for a RESP3 connection and the RESP2 form Redis uses otherwise. Which one is the
// thread's current reply protocol, set by whoever runs a command for a connection (Call, the
// network loop, pub/sub delivery) with ReplyProtocolScope; handlers never branch on it. The
// untyped writers (simple, error, integer, bulk, array) are the same in both.
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

enum class Protocol : uint8_t { kResp2 = 2, kResp3 = 3 };

namespace reply_internal {
inline thread_local Protocol current_protocol = Protocol::kResp2;
}  // namespace reply_internal

// The protocol the calling thread is writing replies in (RESP2 unless a scope says otherwise).
inline Protocol ReplyProtocol() { return reply_internal::current_protocol; }
inline bool ReplyResp3() { return reply_internal::current_protocol == Protocol::kResp3; }

// Sets the calling thread's reply protocol for its lifetime and restores the previous one.
class ReplyProtocolScope {
 public:
  explicit ReplyProtocolScope(Protocol protocol) : saved_(reply_internal::current_protocol) {
    reply_internal::current_protocol = protocol;
  }
  ~ReplyProtocolScope() { reply_internal::current_protocol = saved_; }
  ReplyProtocolScope(const ReplyProtocolScope&) = delete;
  ReplyProtocolScope& operator=(const ReplyProtocolScope&) = delete;

 private:
  Protocol saved_;
};

// "+text\r\n". REQUIRES: text has no CR or LF.
void AppendSimple(std::string* out, std::string_view text);
// "-<text>\r\n"; `text` starts with the error code ("ERR ...", "WRONGTYPE ..."). CR and LF in
// it are replaced by spaces, as Redis does, so an error never breaks the protocol.
void AppendError(std::string* out, std::string_view text);
// The reply for a non-ok Status: -WRONGTYPE for kWrongType, else "-ERR <message>".
void AppendStatusError(std::string* out, const Status& status);
void AppendInteger(std::string* out, int64_t value);
void AppendBulk(std::string* out, std::string_view value);
// The null reply of the thread's protocol: "$-1" / "_" (a missing value), "*-1" / "_" (a
// missing aggregate). For callers that pass a reply around; others use AppendNull*.
inline std::string_view NullBulkReply() { return ReplyResp3() ? "_\r\n" : kReplyNullBulk; }
inline std::string_view NullArrayReply() { return ReplyResp3() ? "_\r\n" : kReplyNullArray; }
// A missing value: "$-1" (RESP2 null bulk) / "_" (RESP3 null).
void AppendNull(std::string* out);
// A missing aggregate (BLPOP's timeout, an aborted EXEC): "*-1" / "_".
void AppendNullArray(std::string* out);
// Bulk or null (AppendNull).
void AppendOptionalBulk(std::string* out, const std::optional<std::string>& value);
void AppendArrayHeader(std::string* out, int64_t count);
// A map of `pairs` key/value pairs (each written after it): "*<2*pairs>" / "%<pairs>".
void AppendMapHeader(std::string* out, int64_t pairs);
// A set of `count` elements: "*<count>" / "~<count>".
void AppendSetHeader(std::string* out, int64_t count);
// Out-of-band data (pub/sub messages, invalidations): "*<count>" / "><count>".
void AppendPushHeader(std::string* out, int64_t count);
// A double as Redis's addReplyDouble writes it: a bulk of "%.17g" ("inf", "-inf") / ",<%.17g>".
void AppendDouble(std::string* out, double value);
// A double already formatted as Redis formats it (a stored score's text): bulk / ",<text>".
void AppendDoubleText(std::string* out, std::string_view text);
// A reply of `count` members, each followed by its score when `with_scores` (WITHSCORES,
// ZPOPMIN with a count, ZRANDMEMBER WITHSCORES; HRANDFIELD WITHVALUES with values for scores):
// RESP2 one flat array; RESP3, with scores, an array of [member, score] pairs (Redis 7.0).
void AppendPairsHeader(std::string* out, int64_t count, bool with_scores);
// One entry of such a reply: the member, and its score (Redis's text of it) when `with_scores`,
// as a double under RESP3.
void AppendScoredMember(std::string* out, std::string_view member, std::string_view score,
                        bool with_scores);
// One entry of a field/value pairs reply (HRANDFIELD WITHVALUES): both bulks.
void AppendPair(std::string* out, std::string_view field, std::string_view value);
// ":1"/":0" / "#t"/"#f".
void AppendBool(std::string* out, bool value);
// Text a human reads (INFO, CLIENT LIST): a bulk / "=<len>\r\ntxt:<text>".
void AppendVerbatim(std::string* out, std::string_view text);
// True when the reply bytes start with a null bulk ("$-1"), a null array ("*-1") or a RESP3 null.
inline bool IsNilReply(const char* reply, size_t length) {
  if (length >= 1 && reply[0] == '_') return true;
  return length >= 3 && (reply[0] == '$' || reply[0] == '*') && reply[1] == '-' && reply[2] == '1';
}

}  // namespace rockcache::server
