#include "server/protocol/reply.h"

#include <charconv>

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
  char buf[24];
  auto res = std::to_chars(buf, buf + sizeof(buf), value);
  out->push_back(':');
  out->append(buf, res.ptr);
  out->append("\r\n");
}

void AppendBulk(std::string* out, std::string_view value) {
  char buf[24];
  auto res = std::to_chars(buf, buf + sizeof(buf), value.size());
  out->push_back('$');
  out->append(buf, res.ptr);
  out->append("\r\n");
  out->append(value);
  out->append("\r\n");
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
