#include "server/protocol/reply.h"

#include <charconv>
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
  out->append(buf, static_cast<size_t>(p - buf));
  out->append(value);
  out->append("\r\n", 2);
}

void AppendOptionalBulk(std::string* out, const std::optional<std::string>& value) {
  if (value) {
    AppendBulk(out, *value);
  } else {
    out->append(kReplyNullBulk);
  }
}

void AppendArrayHeader(std::string* out, int64_t count) {
  char buf[24];
  auto res = std::to_chars(buf, buf + sizeof(buf), count);
  out->push_back('*');
  out->append(buf, res.ptr);
  out->append("\r\n");
}

}  // namespace rockcache::server
