// The read cache under a many-client stress over few keys with a tiny cache (so eviction runs
// all the time): no client is ever served an old value.
//
// Catch2 assertions are not thread-safe: stress threads record problems, the main thread checks.

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <iostream>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/cache_helpers.h"
#include "tests/support/test_helpers.h"
#include "tests/support/test_server.h"

using rockcache::testing::CacheVerify;
using rockcache::testing::Client;
using rockcache::testing::Describe;
using rockcache::testing::InfoFields;
using rockcache::testing::InfoNumber;
using rockcache::testing::InfoText;
using rockcache::testing::ListIndexReply;
using rockcache::testing::ListRangeReply;
using rockcache::testing::Reply;
using rockcache::testing::SleepMs;
using rockcache::testing::TestServer;
using rockcache::testing::VerifyResult;

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace cache_stress_test {

namespace {

// ---- the coherence stress ----------------------------------------------------------------------

constexpr int kThreads = 8;
constexpr int kSharedStrings = 16;
constexpr int kSharedHashes = 8;
constexpr int kOwnStrings = 16;
constexpr int kOwnCounters = 4;
constexpr int kOwnHashes = 4;
constexpr int kOwnLists = 2;

struct StressShared {
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> operations{0};
  std::atomic<uint64_t> violations{0};
  std::atomic<uint64_t> signal_checks{0};
  std::atomic<int64_t> published[kThreads / 2];  // pair p: the last sig value acknowledged
  std::mutex mu;
  std::vector<std::string> messages;  // the first few violations, for the report
  StressShared() {
    for (auto& p : published) p.store(0);
  }
  void Violation(const std::string& what) {
    violations.fetch_add(1);
    std::lock_guard<std::mutex> lock(mu);
    if (messages.size() < 20) messages.push_back(what);
  }
};

// What one thread knows about its own keys.
struct OwnModel {
  std::map<std::string, std::string> strings;  // present keys only
  std::set<std::string> with_ttl;              // keys that have a TTL
  std::map<std::string, int64_t> counters;
  std::map<std::string, std::map<std::string, std::string>> hashes;  // non-empty hashes only
  std::map<std::string, std::deque<std::string>> lists;              // empty = absent
};

bool WellFormedShared(const std::string& s) {
  for (char ch : s) {
    if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '+' || ch == '.')) {
      return false;
    }
  }
  return true;
}

// One queued command and how to check its reply.
struct Op {
  std::vector<std::string> args;
  std::string expected;                              // exact Describe() result; empty: use `check`
  int check = 0;                                     // see CheckShared
  int64_t min_int = 0;                               // kSharedCounter / kSignal lower bounds
  std::map<std::string, std::string> expected_hash;  // kOwnHashAll
  std::vector<std::string> mget_expect;              // kMixedMget: "" = shared (well-formed)
};

enum Check {
  kExact = 0,
  kSharedString,   // GET of a shared string key: nil or well-formed bulk
  kSharedWrite,    // status OK / integer / not-an-integer error; never WRONGTYPE
  kSharedHashGet,  // HGET of a shared hash: nil or well-formed bulk
  kSharedHashAll,  // HGETALL of a shared hash: even, unique fields, well-formed
  kSharedInt,      // integer reply (HSET/HDEL/EXPIRE/DEL counts)
  kSharedCounter,  // INCR of the shared counter: strictly above min_int
  kSignal,         // GET sig:<p>: integer value >= min_int
  kOwnHashAll,     // HGETALL of an own hash == expected_hash (as a map)
  kMixedMget,      // MGET over own and shared keys
  kTtlPositive,    // TTL of an own key with a TTL: 1..1000
  kSharedType,     // TYPE of a shared key: the given type or none
};

std::string CheckReply(const Op& op, const Reply& r) {
  auto bad = [&](const std::string& why) {
    std::string cmd;
    for (const auto& a : op.args) cmd += (cmd.empty() ? "" : " ") + a.substr(0, 40);
    return cmd + " -> " + Describe(r).substr(0, 200) + " (" + why + ")";
  };
  switch (op.check) {
    case kExact:
      if (Describe(r) != op.expected) return bad("expected " + op.expected.substr(0, 200));
      return "";
    case kSharedString:
    case kSharedHashGet:
      if (r.is_nil()) return "";
      if (r.type != REDIS_REPLY_STRING || !WellFormedShared(r.str)) return bad("malformed");
      return "";
    case kSharedWrite:
      if (r.type == REDIS_REPLY_STATUS && r.str == "OK") return "";
      if (r.type == REDIS_REPLY_INTEGER) return "";
      if (r.is_error() && r.str.rfind("ERR value is not an integer", 0) == 0) return "";
      return bad("unexpected reply to a shared write");
    case kSharedHashAll: {
      if (r.type != REDIS_REPLY_ARRAY || r.elements.size() % 2 != 0) return bad("malformed");
      std::set<std::string> fields;
      for (size_t i = 0; i < r.elements.size(); i += 2) {
        if (r.elements[i].type != REDIS_REPLY_STRING ||
            r.elements[i + 1].type != REDIS_REPLY_STRING ||
            !WellFormedShared(r.elements[i + 1].str)) {
          return bad("malformed pair");
        }
        if (!fields.insert(r.elements[i].str).second) return bad("duplicate field");
      }
      return "";
    }
    case kSharedInt:
      if (r.type != REDIS_REPLY_INTEGER) return bad("not an integer");
      return "";
    case kSharedCounter:
      if (r.type != REDIS_REPLY_INTEGER) return bad("not an integer");
      if (r.integer <= op.min_int) {
        return bad("counter went from " + std::to_string(op.min_int) + " to " +
                   std::to_string(r.integer));
      }
      return "";
    case kSignal: {
      if (op.min_int == 0 && r.is_nil()) return "";
      if (r.type != REDIS_REPLY_STRING) return bad("not a bulk");
      int64_t v = std::strtoll(r.str.c_str(), nullptr, 10);
      if (v < op.min_int) {
        return bad("read " + std::to_string(v) + " after " + std::to_string(op.min_int) +
                   " was acknowledged");
      }
      return "";
    }
    case kOwnHashAll: {
      if (r.type != REDIS_REPLY_ARRAY || r.elements.size() % 2 != 0) return bad("malformed");
      std::map<std::string, std::string> got;
      for (size_t i = 0; i + 1 < r.elements.size(); i += 2) {
        got[r.elements[i].str] = r.elements[i + 1].str;
      }
      if (got != op.expected_hash || got.size() * 2 != r.elements.size()) {
        return bad("hash differs from the model (" + std::to_string(op.expected_hash.size()) +
                   " fields expected)");
      }
      return "";
    }
    case kMixedMget: {
      if (r.type != REDIS_REPLY_ARRAY || r.elements.size() != op.mget_expect.size()) {
        return bad("malformed");
      }
      for (size_t i = 0; i < r.elements.size(); ++i) {
        const Reply& e = r.elements[i];
        if (op.mget_expect[i].empty()) {
          if (!e.is_nil() && (e.type != REDIS_REPLY_STRING || !WellFormedShared(e.str))) {
            return bad("malformed shared element");
          }
        } else if (Describe(e) != op.mget_expect[i]) {
          return bad("element " + std::to_string(i) + " expected " +
                     op.mget_expect[i].substr(0, 100));
        }
      }
      return "";
    }
    case kTtlPositive:
      if (r.type != REDIS_REPLY_INTEGER || r.integer < 1 || r.integer > 1000) {
        return bad("TTL out of range");
      }
      return "";
    case kSharedType:
      if (r.type != REDIS_REPLY_STATUS || (r.str != op.expected && r.str != "none")) {
        return bad("type");
      }
      return "";
  }
  return bad("unknown check");
}

std::string RandomValue(std::mt19937_64& rng, int thread, uint64_t seq) {
  std::string v = "t" + std::to_string(thread) + "-" + std::to_string(seq) + "-";
  size_t pad = std::uniform_int_distribution<size_t>(10, 300)(rng);
  v.append(pad, static_cast<char>('a' + seq % 26));
  return v;
}

// Whether `op` names exactly one key, at args[1] (what a wrapping EVAL declares).
bool OneKey(const Op& op) { return op.args[0] != "MGET" && op.args[0] != "EXISTS"; }

// With `units`, the ops of a batch go to the server in atomic units too, which see the cache
// through their staging cache (server/unit_cache.h): runs of 2-5 ops in MULTI/EXEC, and one-key
// ops in an EVAL that makes the same call (its reply converts back to the same reply).
void StressThread(int port, int t, StressShared* shared, uint64_t seed, bool units) {
  std::mt19937_64 rng(seed);
  auto pick = [&rng](int n) { return static_cast<int>(rng() % static_cast<uint64_t>(n)); };
  Client c(port, 30000);
  if (!c.connected()) {
    shared->Violation("thread " + std::to_string(t) + ": connect failed");
    return;
  }
  OwnModel model;
  int64_t last_counter = 0;
  uint64_t seq = 0;
  int64_t next_signal = 0;
  const int pair = t / 2;
  const bool signaller = t % 2 == 0;
  const std::string sig_key = "sig:" + std::to_string(pair);
  std::string prefix = "own:" + std::to_string(t) + ":";

  auto own_s = [&](int i) { return prefix + "s:" + std::to_string(i); };
  auto own_n = [&](int i) { return prefix + "n:" + std::to_string(i); };
  auto own_h = [&](int i) { return prefix + "h:" + std::to_string(i); };
  auto own_l = [&](int i) { return prefix + "l:" + std::to_string(i); };
  auto sh_s = [&](int i) { return "sh:s:" + std::to_string(i); };
  auto sh_h = [&](int i) { return "sh:h:" + std::to_string(i); };
  auto bulk_or_nil = [](const std::map<std::string, std::string>& m, const std::string& k) {
    auto it = m.find(k);
    return it == m.end() ? std::string("nil") : "bulk:" + it->second;
  };

  while (!shared->stop.load()) {
    std::vector<Op> batch;
    int64_t signal_sent = 0;  // this batch publishes this value once acknowledged
    // Read what the partner has had acknowledged *before* this batch is sent.
    int64_t signal_floor = shared->published[pair].load(std::memory_order_acquire);
    int ops = 10 + pick(30);
    for (int n = 0; n < ops; ++n) {
      Op op;
      int kind = pick(100);
      ++seq;
      if (pick(8) == 0) {  // own list: pushes and pops (which edit the cached head), reads
        std::string k = own_l(pick(kOwnLists));
        std::deque<std::string>& list = model.lists[k];
        const int what = pick(list.size() > 30 ? 6 : 8);
        if (what < 2) {  // LPOP / RPOP
          const bool left = what == 0;
          op.args = {left ? "LPOP" : "RPOP", k};
          op.expected = list.empty() ? "nil" : "bulk:" + (left ? list.front() : list.back());
          if (!list.empty()) left ? list.pop_front() : list.pop_back();
        } else if (what < 4) {  // LRANGE near the head (cached) or anywhere
          const int64_t start = pick(6) - 1, stop = pick(3) == 0 ? -1 : pick(12) - 2;
          op.args = {"LRANGE", k, std::to_string(start), std::to_string(stop)};
          op.expected = ListRangeReply(list, start, stop);
        } else if (what == 4) {
          const int64_t index = pick(10) - 3;
          op.args = {"LINDEX", k, std::to_string(index)};
          op.expected = ListIndexReply(list, index);
        } else if (what == 5) {
          op.args = {"LLEN", k};
          op.expected = "int:" + std::to_string(list.size());
        } else {  // LPUSH / RPUSH
          const bool left = what == 6;
          const std::string element = "t" + std::to_string(t) + "-" + std::to_string(seq);
          left ? list.push_front(element) : list.push_back(element);
          op.args = {left ? "LPUSH" : "RPUSH", k, element};
          op.expected = "int:" + std::to_string(list.size());
        }
      } else if (kind < 8) {  // own string: SET
        std::string k = own_s(pick(kOwnStrings)), v = RandomValue(rng, t, seq);
        op.args = {"SET", k, v};
        op.expected = "status:OK";
        model.strings[k] = v;
        model.with_ttl.erase(k);
      } else if (kind < 12) {  // own string: APPEND
        std::string k = own_s(pick(kOwnStrings));
        std::string& cur = model.strings[k];  // absent -> created empty
        if (cur.size() > 800) {
          cur = "reset" + std::to_string(seq);
          op.args = {"SET", k, cur};
          op.expected = "status:OK";
          model.with_ttl.erase(k);
        } else {
          std::string suffix = "+" + std::to_string(seq);
          cur += suffix;
          op.args = {"APPEND", k, suffix};
          op.expected = "int:" + std::to_string(cur.size());
        }
      } else if (kind < 16) {  // own counter: INCR / INCRBY
        std::string k = own_n(pick(kOwnCounters));
        int64_t by = pick(3) == 0 ? pick(1000) - 500 : 1;
        int64_t& cur = model.counters[k];
        cur += by;
        op.args = by == 1 ? std::vector<std::string>{"INCR", k}
                          : std::vector<std::string>{"INCRBY", k, std::to_string(by)};
        op.expected = "int:" + std::to_string(cur);
      } else if (kind < 18) {  // own: DEL (string or counter)
        std::string k = pick(2) ? own_s(pick(kOwnStrings)) : own_n(pick(kOwnCounters));
        bool present = model.strings.count(k) || model.counters.count(k);
        model.strings.erase(k);
        model.counters.erase(k);
        model.with_ttl.erase(k);
        op.args = {"DEL", k};
        op.expected = present ? "int:1" : "int:0";
      } else if (kind < 20) {  // own: EXPIRE 1000 / EXPIRE 0 (delete) / PERSIST
        std::string k = own_s(pick(kOwnStrings));
        bool present = model.strings.count(k) > 0;
        int what = pick(3);
        if (what == 0) {
          op.args = {"EXPIRE", k, "1000"};
          op.expected = present ? "int:1" : "int:0";
          if (present) model.with_ttl.insert(k);
        } else if (what == 1) {
          op.args = {"EXPIRE", k, "0"};
          op.expected = present ? "int:1" : "int:0";
          model.strings.erase(k);
          model.with_ttl.erase(k);
        } else {
          op.args = {"PERSIST", k};
          op.expected = present && model.with_ttl.count(k) ? "int:1" : "int:0";
          model.with_ttl.erase(k);
        }
      } else if (kind < 30) {  // own: GET
        std::string k = pick(4) ? own_s(pick(kOwnStrings)) : own_n(pick(kOwnCounters));
        op.args = {"GET", k};
        auto it = model.counters.find(k);
        op.expected = it != model.counters.end() ? "bulk:" + std::to_string(it->second)
                                                 : bulk_or_nil(model.strings, k);
      } else if (kind < 32) {  // own: STRLEN / EXISTS / TTL
        std::string k = own_s(pick(kOwnStrings));
        bool present = model.strings.count(k) > 0;
        int what = pick(3);
        if (what == 0) {
          op.args = {"STRLEN", k};
          op.expected = "int:" + std::to_string(present ? model.strings[k].size() : 0);
        } else if (what == 1) {
          std::string k2 = own_s(pick(kOwnStrings));
          op.args = {"EXISTS", k, k2};
          op.expected =
              "int:" + std::to_string((present ? 1 : 0) + (model.strings.count(k2) ? 1 : 0));
        } else {
          op.args = {"TTL", k};
          if (!present) {
            op.expected = "int:-2";
          } else if (!model.with_ttl.count(k)) {
            op.expected = "int:-1";
          } else {
            op.check = kTtlPositive;
          }
        }
      } else if (kind < 36) {  // MGET over own and shared keys
        op.args = {"MGET"};
        int count = 2 + pick(4);
        for (int i = 0; i < count; ++i) {
          if (pick(2)) {
            std::string k = own_s(pick(kOwnStrings));
            op.args.push_back(k);
            op.mget_expect.push_back(bulk_or_nil(model.strings, k));
          } else {
            op.args.push_back(sh_s(pick(kSharedStrings)));
            op.mget_expect.push_back("");
          }
        }
        op.check = kMixedMget;
      } else if (kind < 42) {  // own hash: HSET
        std::string k = own_h(pick(kOwnHashes));
        std::string f = "f" + std::to_string(pick(12)), v = RandomValue(rng, t, seq);
        auto& h = model.hashes[k];
        bool added = h.count(f) == 0;
        h[f] = v;
        op.args = {"HSET", k, f, v};
        op.expected = added ? "int:1" : "int:0";
      } else if (kind < 45) {  // own hash: HDEL (sometimes of every field)
        std::string k = own_h(pick(kOwnHashes));
        auto it = model.hashes.find(k);
        op.args = {"HDEL", k};
        int removed = 0;
        if (it != model.hashes.end() && pick(3) == 0) {
          for (const auto& [f, v] : it->second) op.args.push_back(f);
          removed = static_cast<int>(it->second.size());
          model.hashes.erase(it);
        } else {
          std::string f = "f" + std::to_string(pick(12));
          op.args.push_back(f);
          if (it != model.hashes.end() && it->second.erase(f)) ++removed;
          if (it != model.hashes.end() && it->second.empty()) model.hashes.erase(it);
        }
        op.expected = "int:" + std::to_string(removed);
      } else if (kind < 52) {  // own hash: HGET / HGETALL / HLEN
        std::string k = own_h(pick(kOwnHashes));
        auto it = model.hashes.find(k);
        int what = pick(3);
        if (what == 0) {
          std::string f = "f" + std::to_string(pick(12));
          op.args = {"HGET", k, f};
          op.expected = it == model.hashes.end() ? "nil" : bulk_or_nil(it->second, f);
        } else if (what == 1) {
          op.args = {"HGETALL", k};
          op.check = kOwnHashAll;
          if (it != model.hashes.end()) op.expected_hash = it->second;
        } else {
          op.args = {"HLEN", k};
          op.expected = "int:" + std::to_string(it == model.hashes.end() ? 0 : it->second.size());
        }
      } else if (kind < 62) {  // shared strings: writes
        std::string k = sh_s(pick(kSharedStrings));
        int what = pick(6);
        if (what == 0) {
          op.args = {"SET", k, RandomValue(rng, t, seq)};
        } else if (what == 1) {
          op.args = {"SET", k, std::to_string(pick(1000))};
        } else if (what == 2) {
          op.args = {"INCR", k};
        } else if (what == 3) {
          op.args = {"APPEND", k, "+" + std::to_string(seq % 10)};
        } else if (what == 4) {
          op.args = {"DEL", k};
        } else {
          op.args = {"PEXPIRE", k, std::to_string(20 + pick(200))};
        }
        op.check = kSharedWrite;
      } else if (kind < 72) {  // shared strings: reads
        std::string k = sh_s(pick(kSharedStrings));
        if (pick(5) == 0) {
          op.args = {"TYPE", k};
          op.expected = "string";
          op.check = kSharedType;
        } else {
          op.args = {"GET", k};
          op.check = kSharedString;
        }
      } else if (kind < 78) {  // shared hashes: writes
        std::string k = sh_h(pick(kSharedHashes));
        std::string f = "f" + std::to_string(pick(8));
        int what = pick(4);
        if (what < 2) {
          op.args = {"HSET", k, f, RandomValue(rng, t, seq)};
        } else if (what == 2) {
          op.args = {"HDEL", k, f};
        } else {
          op.args = {"HDEL", k, "f0", "f1", "f2", "f3", "f4", "f5", "f6", "f7"};
        }
        op.check = kSharedInt;
      } else if (kind < 86) {  // shared hashes: reads
        std::string k = sh_h(pick(kSharedHashes));
        int what = pick(3);
        if (what == 0) {
          op.args = {"HGET", k, "f" + std::to_string(pick(8))};
          op.check = kSharedHashGet;
        } else if (what == 1) {
          op.args = {"HGETALL", k};
          op.check = kSharedHashAll;
        } else {
          op.args = {"TYPE", k};
          op.expected = "hash";
          op.check = kSharedType;
        }
      } else if (kind < 92) {  // shared counter, strictly increasing per connection
        op.args = {"INCR", "sh:ctr"};
        op.check = kSharedCounter;
        op.min_int = -1;  // filled in while checking
      } else {            // the cross-connection signal
        if (signaller) {
          if (signal_sent == 0) {
            signal_sent = ++next_signal;
            op.args = {"SET", sig_key, std::to_string(signal_sent)};
            op.expected = "status:OK";
          } else {
            op.args = {"GET", sig_key};
            op.check = kSignal;
            op.min_int = signal_sent;  // read-your-writes of the SET earlier in this batch
          }
        } else {
          op.args = {"GET", sig_key};
          op.check = kSignal;
          op.min_int = signal_floor;
          shared->signal_checks.fetch_add(1);
        }
      }
      batch.push_back(std::move(op));
    }

    // How each op went: alone, in an EVAL, or as the first of `count` ops in MULTI/EXEC.
    enum class Sent { kPlain, kScript, kExec, kInExec };
    std::vector<Sent> sent(batch.size(), Sent::kPlain);
    std::vector<size_t> exec_count(batch.size(), 0);
    for (size_t i = 0; i < batch.size(); ++i) {
      if (units && i + 1 < batch.size() && pick(5) == 0) {
        const size_t count = std::min<size_t>(2 + pick(4), batch.size() - i);
        c.Append({"MULTI"});
        for (size_t j = i; j < i + count; ++j) {
          c.Append(batch[j].args);
          sent[j] = Sent::kInExec;
        }
        c.Append({"EXEC"});
        sent[i] = Sent::kExec;
        exec_count[i] = count;
        i += count - 1;
      } else if (units && OneKey(batch[i]) && pick(3) == 0) {
        std::vector<std::string> eval = {"EVAL", "return redis.call(unpack(ARGV))", "1",
                                         batch[i].args[1]};
        eval.insert(eval.end(), batch[i].args.begin(), batch[i].args.end());
        c.Append(eval);
        sent[i] = Sent::kScript;
      } else {
        c.Append(batch[i].args);
      }
    }
    auto check = [&](Op& op, const Reply& r) {
      shared->operations.fetch_add(1, std::memory_order_relaxed);
      if (op.check == kSharedCounter) {
        op.min_int = last_counter;
        if (r.type == REDIS_REPLY_INTEGER) last_counter = r.integer;
      }
      std::string problem = CheckReply(op, r);
      if (!problem.empty()) {
        const Sent how = sent[static_cast<size_t>(&op - batch.data())];
        const char* via = how == Sent::kPlain    ? ": "
                          : how == Sent::kScript ? " (EVAL): "
                                                 : " (EXEC): ";
        shared->Violation("thread " + std::to_string(t) + via + problem);
      }
    };
    for (size_t i = 0; i < batch.size(); ++i) {
      Reply r;
      if (!c.GetReply(&r)) {
        shared->Violation("thread " + std::to_string(t) + ": connection error on " +
                          batch[i].args[0]);
        return;
      }
      if (sent[i] != Sent::kExec) {
        check(batch[i], r);
        continue;
      }
      // MULTI's +OK, a +QUEUED per op, then EXEC's array of their replies.
      const size_t count = exec_count[i];
      bool queued = r.type == REDIS_REPLY_STATUS && r.str == "OK";
      for (size_t j = 0; j < count && queued; ++j) {
        queued = c.GetReply(&r) && r.type == REDIS_REPLY_STATUS && r.str == "QUEUED";
      }
      if (!queued || !c.GetReply(&r) || r.type != REDIS_REPLY_ARRAY || r.elements.size() != count) {
        shared->Violation("thread " + std::to_string(t) + ": MULTI/EXEC of " +
                          std::to_string(count) + " failed: " + Describe(r));
        return;
      }
      for (size_t j = 0; j < count; ++j) check(batch[i + j], r.elements[j]);
      i += count - 1;
    }
    // Every SET of this batch is acknowledged now: tell the partner.
    if (signal_sent > 0) shared->published[pair].store(signal_sent, std::memory_order_release);
  }

  // Final check of every own key from this connection.
  for (int i = 0; i < kOwnStrings; ++i) {
    Reply r;
    Op op;
    op.args = {"GET", own_s(i)};
    op.expected = bulk_or_nil(model.strings, own_s(i));
    if (!c.TryCommand(op.args, &r)) return shared->Violation("final GET: connection error");
    std::string problem = CheckReply(op, r);
    if (!problem.empty()) shared->Violation("thread " + std::to_string(t) + " final: " + problem);
  }
  for (int i = 0; i < kOwnHashes; ++i) {
    Reply r;
    Op op;
    op.args = {"HGETALL", own_h(i)};
    op.check = kOwnHashAll;
    auto it = model.hashes.find(own_h(i));
    if (it != model.hashes.end()) op.expected_hash = it->second;
    if (!c.TryCommand(op.args, &r)) return shared->Violation("final HGETALL: connection error");
    std::string problem = CheckReply(op, r);
    if (!problem.empty()) shared->Violation("thread " + std::to_string(t) + " final: " + problem);
  }
  for (int i = 0; i < kOwnLists; ++i) {
    Reply r;
    Op op;
    op.args = {"LRANGE", own_l(i), "0", "-1"};
    op.expected = ListRangeReply(model.lists[own_l(i)], 0, -1);
    if (!c.TryCommand(op.args, &r)) return shared->Violation("final LRANGE: connection error");
    std::string problem = CheckReply(op, r);
    if (!problem.empty()) shared->Violation("thread " + std::to_string(t) + " final: " + problem);
  }
}

int StressSeconds() {
  const char* env = std::getenv("ROCKCACHE_STRESS_SECONDS");
  int s = env ? std::atoi(env) : 0;
  return s > 0 ? s : 25;
}

// The stress with a 64kb cache that evicts all the time, two workers whatever the machine (a
// 2-core machine's default is one, and the coherence rule must hold between workers running
// groups at once, as every bigger machine does). `units`: see StressThread.
void RunCoherenceStress(bool units, int seconds) {
  TestServer server({"--cache-maxmemory", "64kb", "--pool-threads", "2"});
  Client admin(server.port(), 30000);
  REQUIRE(InfoNumber(admin, "cache", "cache_maxmemory") == 64 * 1024);

  StressShared shared;
  std::vector<std::thread> threads;
  std::random_device rd;
  uint64_t base_seed = (static_cast<uint64_t>(rd()) << 32) ^ rd();
  INFO("seed " << base_seed);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back(StressThread, server.port(), t, &shared, base_seed + t, units);
  }
  auto start = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - start < std::chrono::seconds(seconds) &&
         shared.violations.load() < 1000) {
    SleepMs(100);
  }
  shared.stop = true;
  for (auto& th : threads) th.join();

  auto cache = InfoFields(InfoText(admin, "cache"));
  VerifyResult verify = CacheVerify(admin);
  uint64_t ops = shared.operations.load(), violations = shared.violations.load();
  std::cout << "coherence stress" << (units ? " (with EVAL and MULTI/EXEC)" : "") << ": " << ops
            << " operations, " << violations << " violations, " << verify.mismatches
            << " mismatches (" << seconds << " s, " << kThreads << " clients, "
            << shared.signal_checks.load() << " cross-connection checks, "
            << "cache_evictions=" << cache["cache_evictions"]
            << " cache_hits=" << cache["cache_hits"] << " cache_misses=" << cache["cache_misses"]
            << " cache_rtc_answers=" << cache["cache_rtc_answers"]
            << " cache_coalesced_misses=" << cache["cache_coalesced_misses"]
            << " cache_negative_hits=" << cache["cache_negative_hits"]
            << " cache_rtc_storage_fills=" << cache["cache_rtc_storage_fills"]
            << " cache_used_bytes=" << cache["cache_used_bytes"] << ")" << std::endl;
  std::string first_violations;
  {
    std::lock_guard<std::mutex> lock(shared.mu);
    for (const auto& m : shared.messages) first_violations += "\n  " + m;
  }
  if (!first_violations.empty()) std::cout << "first violations:" << first_violations << std::endl;
  CHECK(ops > 10000);
  CHECK(shared.signal_checks.load() > 100);
  {
    INFO("first violations:" << first_violations);
    CHECK(violations == 0);
  }
  INFO(verify.text);
  CHECK(verify.checked > 0);
  CHECK(verify.mismatches == 0);
  CHECK(std::stoull(cache["cache_evictions"]) > 0);
  CHECK(std::stoull(cache["cache_rtc_answers"]) > 0);
  CHECK(std::stoull(cache["cache_rtc_storage_fills"]) > 0);  // misses filled without a hop
  CHECK(std::stoull(cache["cache_used_bytes"]) <= 64 * 1024);
}

}  // namespace

TEST_CASE("coherence stress: 8 clients, few keys, a 64kb cache that evicts all the time",
          "[cache]") {
  RunCoherenceStress(/*units=*/false, StressSeconds());
}

TEST_CASE(
    "coherence stress through scripts and transactions: a unit's writes reach the cache "
    "at its commit",
    "[cache][scripting][transaction]") {
  RunCoherenceStress(/*units=*/true, StressSeconds() * 3 / 5);
}

}  // namespace cache_stress_test
