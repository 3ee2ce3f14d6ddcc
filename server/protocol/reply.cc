#include "server/protocol/reply.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace rockcache::server {

void AppendSimple(std::string* out, std::string_view text) {
  out->push_back('+');
  out->append(text);
  out->append("\r\n");
}

void AppendError(std::string* out, std::string_view text) {
  out->push_back('-');
  size_t start = out->size();
  out->append(text);
  for (size_t i = start; i < out->size(); ++i) {
    if ((*out)[i] == '\r' || (*out)[i] == '\n') (*out)[i] = ' ';
  }
  out->append("\r\n");
}

void AppendStatusError(std::string* out, const Status& status) {
  if (status.IsWrongType()) {
    out->append(kReplyWrongType);
    return;
  }
  std::string text = "ERR ";
  text += status.message();
  AppendError(out, text);
}

void AppendInteger(std::string* out, int64_t value) {
  // ":<value>\r\n" built on the stack and appended once (three appends cost more than the
  // formatting: every LPUSH, INCR, SADD... replies with one).
  char buf[32];
  buf[0] = ':';
  char* p = std::to_chars(buf + 1, buf + 28, value).ptr;
  *p++ = '\r';
  *p++ = '\n';
  out->append(buf, static_cast<size_t>(p - buf));
}

void AppendBulk(std::string* out, std::string_view value) {
  // "$<length>\r\n" is at most 24 bytes; a small value goes with it in one append (a range
  // read's replies are mostly many small bulks: one append each instead of five).
  char buf[96];
  char* p = buf;
  *p++ = '$';
  p = std::to_chars(p, buf + 21, value.size()).ptr;
  *p++ = '\r';
  *p++ = '\n';
  if (value.size() + 2 <= static_cast<size_t>(buf + sizeof(buf) - p)) {
    if (!value.empty()) std::memcpy(p, value.data(), value.size());
    p += value.size();
    *p++ = '\r';
    *p++ = '\n';
    out->append(buf, static_cast<size_t>(p - buf));
    return;
  }
  // One growth for the three appends (libstdc++'s reserve still at least doubles a capacity it
  // grows, so a reply buffer appended to many times stays amortized).
  out->reserve(out->size() + static_cast<size_t>(p - buf) + value.size() + 2);
  out->append(buf, static_cast<size_t>(p - buf));
  out->append(value);
  out->append("\r\n", 2);
}

void AppendOptionalBulk(std::string* out, const std::optional<std::string>& value) {
  if (value) {
    AppendBulk(out, *value);
  } else {
    AppendNull(out);
  }
}

void AppendNull(std::string* out) {
  out->append(ReplyResp3() ? std::string_view("_\r\n") : NullBulkReply());
}

void AppendNullArray(std::string* out) {
  out->append(ReplyResp3() ? std::string_view("_\r\n") : NullArrayReply());
}

namespace {

void AppendHeader(std::string* out, char type, int64_t count) {
  char buf[32];
  buf[0] = type;
  char* p = std::to_chars(buf + 1, buf + 28, count).ptr;
  *p++ = '\r';
  *p++ = '\n';
  out->append(buf, static_cast<size_t>(p - buf));
}

}  // namespace

void AppendArrayHeader(std::string* out, int64_t count) { AppendHeader(out, '*', count); }

void AppendMapHeader(std::string* out, int64_t pairs) {
  if (ReplyResp3()) return AppendHeader(out, '%', pairs);
  AppendHeader(out, '*', pairs * 2);
}

void AppendSetHeader(std::string* out, int64_t count) {
  AppendHeader(out, ReplyResp3() ? '~' : '*', count);
}

void AppendPushHeader(std::string* out, int64_t count) {
  AppendHeader(out, ReplyResp3() ? '>' : '*', count);
}

void AppendDoubleText(std::string* out, std::string_view text) {
  if (!ReplyResp3()) return AppendBulk(out, text);
  out->push_back(',');
  out->append(text);
  out->append("\r\n", 2);
}

void AppendDouble(std::string* out, double value) {
  if (std::isinf(value)) return AppendDoubleText(out, value > 0 ? "inf" : "-inf");
  char buf[64];
  const int n = std::snprintf(buf, sizeof(buf), "%.17g", value);
  AppendDoubleText(out, std::string_view(buf, static_cast<size_t>(n)));
}

void AppendPairsHeader(std::string* out, int64_t count, bool with_scores) {
  AppendHeader(out, '*', with_scores && !ReplyResp3() ? count * 2 : count);
}

void AppendScoredMember(std::string* out, std::string_view member, std::string_view score,
                        bool with_scores) {
  if (!with_scores) return AppendBulk(out, member);
  if (ReplyResp3()) out->append("*2\r\n", 4);
  AppendBulk(out, member);
  AppendDoubleText(out, score);
}

void AppendPair(std::string* out, std::string_view field, std::string_view value) {
  if (ReplyResp3()) out->append("*2\r\n", 4);
  AppendBulk(out, field);
  AppendBulk(out, value);
}

void AppendBool(std::string* out, bool value) {
  if (ReplyResp3()) {
    out->append(value ? "#t\r\n" : "#f\r\n");
  } else {
    out->append(value ? ":1\r\n" : ":0\r\n");
  }
}

void AppendVerbatim(std::string* out, std::string_view text) {
  if (!ReplyResp3()) return AppendBulk(out, text);
  AppendHeader(out, '=', static_cast<int64_t>(text.size() + 4));
  out->append("txt:");
  out->append(text);
  out->append("\r\n", 2);
}

}  // namespace rockcache::server
