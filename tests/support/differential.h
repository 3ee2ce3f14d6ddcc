// Shared pieces of the differential tests ([differential]): the Differ that runs a command on
// rockcache and on a reference redis-server and compares the raw replies, a seeded Rng, and small
// helpers. Header-only, test code.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "tests/support/differential_peer.h"

namespace rockcache::testing::differential {

using Command = std::vector<std::string>;

inline int EnvInt(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::atoi(v) : fallback;
}

// Runs commands on both servers, compares the raw replies and counts per family.
class Differ {
 public:
  // `protocol` 3: both connections say HELLO 3 first (their replies compared as "hello").
  Differ(int rockcache_port, int redis_port, int protocol = 2)
      : ours_(rockcache_port), theirs_(redis_port) {
    if (protocol == 3) {
      ours_.Call({"HELLO", "3"});
      theirs_.Call({"HELLO", "3"});
    }
  }

  // Runs `cmd` on both; returns redis-server's reply.
  std::string Both(const std::string& family, const Command& cmd) {
    std::string mine = ours_.Call(cmd);
    std::string reference = theirs_.Call(cmd);
    auto& stats = stats_[family];
    ++stats.commands;
    if (reference.size() > 4 && reference[0] == '*' && reference.rfind("*-1", 0) != 0) {
      ++stats.nonempty_arrays;
    }
    if (!reference.empty() && reference[0] == '-') ++stats.errors;
    if (mine != reference) {
      ++stats.mismatches;
      if (stats.mismatches <= EnvInt("ROCKCACHE_DIFF_SHOW", 5)) {
        std::string line;
        for (const auto& a : cmd) line += (a.size() > 40 ? a.substr(0, 40) + "..." : a) + " ";
        std::printf("mismatch [%s] %s\n  redis-server: %s\n  rockcache:    %s\n", family.c_str(),
                    line.c_str(), Printable(reference).c_str(), Printable(mine).c_str());
      }
    }
    return reference;
  }

  // Counts a command whose replies are compared by shape (random replies): `same` says whether
  // rockcache's reply kept the invariants redis-server's keeps.
  void Record(const std::string& family, const Command& cmd, bool same, const std::string& mine,
              const std::string& reference) {
    auto& stats = stats_[family];
    ++stats.commands;
    if (reference.size() > 4 && reference[0] == '*') ++stats.nonempty_arrays;
    if (same) return;
    ++stats.mismatches;
    if (stats.mismatches <= 5) {
      std::string line;
      for (const auto& a : cmd) line += a + " ";
      std::printf("mismatch [%s] %s\n  redis-server: %s\n  rockcache:    %s\n", family.c_str(),
                  line.c_str(), Printable(reference).c_str(), Printable(mine).c_str());
    }
  }

  // Sends one command to one side only (setting up cross-server values).
  std::string Ours(const Command& cmd) { return ours_.Call(cmd); }
  std::string Theirs(const Command& cmd) { return theirs_.Call(cmd); }

  struct Stats {
    int commands = 0;
    int mismatches = 0;
    int nonempty_arrays = 0;  // replies with elements: evidence the sequences reach real data
    int errors = 0;
  };
  const Stats& stats(const std::string& family) { return stats_[family]; }

 private:
  static std::string Printable(const std::string& raw) {
    std::string out;
    for (char c : raw.substr(0, 400)) {
      if (c == '\r') {
        out += "\\r";
      } else if (c == '\n') {
        out += "\\n";
      } else if (static_cast<unsigned char>(c) < 32 || static_cast<unsigned char>(c) > 126) {
        char buf[8];
        std::snprintf(buf, sizeof(buf), "\\x%02x", static_cast<unsigned char>(c));
        out += buf;
      } else {
        out += c;
      }
    }
    return out;
  }

  RespPeer ours_;
  RespPeer theirs_;
  std::map<std::string, Stats> stats_;
};

class Rng {
 public:
  explicit Rng(uint64_t seed) : gen_(seed) {}
  int Int(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(gen_); }
  double Real(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(gen_); }
  bool Chance(double p) { return Real(0, 1) < p; }
  template <typename T>
  const T& Pick(const std::vector<T>& v) {
    return v[static_cast<size_t>(Int(0, static_cast<int>(v.size()) - 1))];
  }

 private:
  std::mt19937_64 gen_;
};

inline std::string Fmt(double v, int digits = 6) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", digits, v);
  return buf;
}

// An integer argument.
inline std::string I(int v) { return std::to_string(v); }

// The bulk payload of a "$n\r\n...\r\n" reply.
inline std::string BulkPayload(const std::string& raw) {
  size_t nl = raw.find("\r\n");
  if (raw.empty() || raw[0] != '$' || nl == std::string::npos) return "";
  return raw.substr(nl + 2, raw.size() - nl - 4);
}

// Whether a raw reply is a nil: RESP2's null bulk or null array, RESP3's null.
inline bool IsNull(const std::string& raw) {
  return raw == "$-1\r\n" || raw == "*-1\r\n" || raw == "_\r\n";
}

// Splits a raw reply (RESP2 or RESP3) into its skeleton — type bytes and aggregate counts,
// payloads left out — and its payloads (bulk strings, doubles, integers...) in order, so replies
// with random contents can be compared by shape. False when the bytes are not one whole reply.
inline bool SplitReply(const std::string& raw, std::string* skeleton,
                       std::vector<std::string>* leaves) {
  skeleton->clear();
  leaves->clear();
  size_t pos = 0;
  std::function<bool()> one = [&]() -> bool {
    if (pos >= raw.size()) return false;
    const char type = raw[pos];
    const size_t eol = raw.find("\r\n", pos);
    if (eol == std::string::npos) return false;
    const std::string line = raw.substr(pos + 1, eol - pos - 1);
    pos = eol + 2;
    if (type == '$' || type == '=' || type == '!') {
      const long len = std::stol(line);
      *skeleton += type;
      if (len < 0) return true;
      if (pos + static_cast<size_t>(len) + 2 > raw.size()) return false;
      leaves->push_back(raw.substr(pos, static_cast<size_t>(len)));
      pos += static_cast<size_t>(len) + 2;
      return true;
    }
    if (type == '*' || type == '~' || type == '>' || type == '%') {
      long n = std::stol(line);
      *skeleton += type + line + "[";
      if (type == '%') n *= 2;
      for (long i = 0; i < n; ++i) {
        if (!one()) return false;
      }
      *skeleton += "]";
      return true;
    }
    *skeleton += type;  // a one-line reply: its text is the payload
    leaves->push_back(line);
    return true;
  };
  return one() && pos == raw.size();
}

}  // namespace rockcache::testing::differential
