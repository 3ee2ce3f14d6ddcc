// Small helpers shared by the integration tests: type-tagged reply descriptions (so that an
// assertion checks the reply type as well as its text) and a few socket/time utilities.
#pragma once

#include <catch2/catch.hpp>
#include <chrono>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/test_server.h"

namespace rockcache::testing {

// "status:OK", "err:ERR ...", "bulk:abc", "int:5", "nil", "[bulk:a, nil]".
inline std::string Describe(const Reply& r) {
  switch (r.type) {
    case REDIS_REPLY_STATUS:
      return "status:" + r.str;
    case REDIS_REPLY_ERROR:
      return "err:" + r.str;
    case REDIS_REPLY_STRING:
      return "bulk:" + r.str;
    case REDIS_REPLY_INTEGER:
      return "int:" + std::to_string(r.integer);
    case REDIS_REPLY_NIL:
      return "nil";
    case REDIS_REPLY_ARRAY: {
      std::string out = "[";
      for (size_t i = 0; i < r.elements.size(); ++i) {
        if (i > 0) out += ", ";
        out += Describe(r.elements[i]);
      }
      return out + "]";
    }
    default:
      return "type" + std::to_string(r.type) + ":" + r.str;
  }
}

// Runs a command and describes its reply.
inline std::string Run(Client& c, const std::vector<std::string>& args) {
  return Describe(c.Command(args));
}

inline void SleepMs(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

inline long long NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// A RESP multibulk request.
inline std::string Resp(const std::vector<std::string>& args) {
  std::string out = "*" + std::to_string(args.size()) + "\r\n";
  for (const auto& a : args) {
    out += "$" + std::to_string(a.size()) + "\r\n" + a + "\r\n";
  }
  return out;
}

// INFO <section> as text. REQUIREs a bulk reply.
inline std::string InfoText(Client& c, const std::string& section) {
  Reply r = c.Command({"INFO", section});
  REQUIRE(r.type == REDIS_REPLY_STRING);
  return r.str;
}

// The "name:value" lines of an INFO reply.
inline std::map<std::string, std::string> InfoFields(const std::string& text) {
  std::map<std::string, std::string> fields;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    fields[line.substr(0, colon)] = line.substr(colon + 1);
  }
  return fields;
}

inline bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// Sends a command without waiting for its reply (read it later with GetReply).
inline void Send(Client& c, const std::vector<std::string>& args) {
  c.Append(args);
  for (int done = 0; !done;) REQUIRE(redisBufferWrite(c.context(), &done) == REDIS_OK);
}

// The occurrences of `needle` in `text` (overlapping ones too).
inline size_t Count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
    ++n;
  }
  return n;
}

// Describe() of the common error replies.
inline constexpr char kWrongType[] =
    "err:WRONGTYPE Operation against a key holding the wrong kind of value";
inline constexpr char kNotInteger[] = "err:ERR value is not an integer or out of range";
inline constexpr char kSyntax[] = "err:ERR syntax error";

}  // namespace rockcache::testing
