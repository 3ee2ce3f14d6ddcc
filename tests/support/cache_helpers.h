// Helpers for the integration tests of the read cache (cache_*_test.cc, list_cache_test.cc...):
// INFO figures, commandstats' rtc_calls (a command answered in the network thread), DEBUG
// CACHE-VERIFY, and the replies a modelled list gives.
#pragma once

#include <cctype>
#include <cstdint>
#include <deque>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/test_helpers.h"
#include "tests/support/test_server.h"

namespace rockcache::testing {

// A numeric INFO field; REQUIREs that it exists.
inline uint64_t InfoNumber(Client& c, const std::string& section, const std::string& field) {
  auto fields = InfoFields(InfoText(c, section));
  INFO("INFO " << section << " field " << field);
  REQUIRE(fields.count(field) == 1);
  return std::stoull(fields[field]);
}

// "a=1,b=2" -> {a:1, b:2}.
inline std::map<std::string, std::string> SubFields(const std::string& value) {
  std::map<std::string, std::string> out;
  std::istringstream in(value);
  std::string item;
  while (std::getline(in, item, ',')) {
    size_t eq = item.find('=');
    if (eq != std::string::npos) out[item.substr(0, eq)] = item.substr(eq + 1);
  }
  return out;
}

// cmdstat_<cmd> rtc_calls (0 when the command has no line yet).
inline uint64_t RtcCalls(Client& c, const std::string& cmd) {
  auto fields = InfoFields(InfoText(c, "commandstats"));
  auto it = fields.find("cmdstat_" + cmd);
  if (it == fields.end()) return 0;
  auto sub = SubFields(it->second);
  REQUIRE(sub.count("rtc_calls") == 1);
  return std::stoull(sub["rtc_calls"]);
}

inline std::string Lower(std::string s) {
  for (char& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

struct VerifyResult {
  uint64_t checked = 0;
  uint64_t mismatches = 0;
  std::string text;
};

inline VerifyResult CacheVerify(Client& c) {
  Reply r = c.Command({"DEBUG", "CACHE-VERIFY"});
  INFO("DEBUG CACHE-VERIFY -> " << Describe(r));
  REQUIRE(r.type == REDIS_REPLY_STRING);
  auto fields = InfoFields(r.str);
  REQUIRE(fields.count("checked") == 1);
  REQUIRE(fields.count("mismatches") == 1);
  VerifyResult v;
  v.checked = std::stoull(fields["checked"]);
  v.mismatches = std::stoull(fields["mismatches"]);
  v.text = r.str;
  return v;
}

// Runs a cache-readable command and REQUIREs that the network thread answered it from the cache
// (cmdstat rtc_calls of the command grew by exactly one). Returns the described reply.
inline std::string RunRtc(Client& admin, Client& c, const std::vector<std::string>& args) {
  std::string cmd = Lower(args[0]);
  uint64_t before = RtcCalls(admin, cmd);
  std::string reply = Run(c, args);
  uint64_t after = RtcCalls(admin, cmd);
  INFO("command " << args[0] << " " << (args.size() > 1 ? args[1] : "") << " -> " << reply);
  CHECK(after == before + 1);
  return reply;
}

// The Describe() of LRANGE start stop / LINDEX index on a list modelled by `list`:
// "[bulk:a, bulk:b]", "[]" when nothing is selected; "bulk:a" or "nil".
inline std::string ListRangeReply(const std::deque<std::string>& list, int64_t start,
                                  int64_t stop) {
  const auto n = static_cast<int64_t>(list.size());
  if (start < 0) start += n;
  if (stop < 0) stop += n;
  if (start < 0) start = 0;
  if (stop >= n) stop = n - 1;
  std::string out = "[";
  for (int64_t i = start; i <= stop && start < n; ++i) {
    if (out.size() > 1) out += ", ";
    out += "bulk:" + list[static_cast<size_t>(i)];
  }
  return out + "]";
}

inline std::string ListIndexReply(const std::deque<std::string>& list, int64_t index) {
  const auto n = static_cast<int64_t>(list.size());
  if (index < 0) index += n;
  if (index < 0 || index >= n) return "nil";
  return "bulk:" + list[static_cast<size_t>(index)];
}

// TTL soon after EXPIRE 100: 100, or down to 95 when a loaded machine (test cases run side by
// side) took seconds meanwhile (TTL rounds to the nearest second); never -1 or a lost TTL.
inline bool Ttl100(const std::string& reply) {
  return reply == "int:100" || reply == "int:99" || reply == "int:98" || reply == "int:97" ||
         reply == "int:96" || reply == "int:95";
}

}  // namespace rockcache::testing
