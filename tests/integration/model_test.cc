// A randomized model test: random commands over a small key space (so that types collide), each
// reply compared exactly with what an in-memory model of Redis 7 semantics expects.
//
// Environment:
//   MODEL_OPS=N             operations to run (default 20000)
//   MODEL_SEED=S            the random seed (default fixed; printed either way)
//   MODEL_AGAINST_PORT=P    run against a server already listening on 127.0.0.1:P instead of
//                           starting rockcache (to validate the model itself against a real
//                           redis-server). That server is FLUSHALLed first.
//
// Commands run in 4 databases (SELECT, MOVE, COPY ... DB, SWAPDB, FLUSHDB, DBSIZE).
//
// Scores are multiples of 0.5 (and +-inf) so that every Redis 7 version writes them the same way.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "tests/support/test_helpers.h"
#include "tests/support/test_server.h"

using rockcache::testing::Client;
using rockcache::testing::Describe;
using rockcache::testing::kWrongType;
using rockcache::testing::Reply;
using rockcache::testing::TestServer;

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace model_test {

namespace {

using Args = std::vector<std::string>;

enum class Kind { kString, kHash, kList, kSet, kZSet };

struct Value {
  Kind type = Kind::kString;
  std::string str;
  std::map<std::string, std::string> hash;
  std::deque<std::string> list;
  std::set<std::string> set;
  std::map<std::string, double> zset;  // member -> score

  bool empty() const {
    switch (type) {
      case Kind::kString:
        return false;
      case Kind::kHash:
        return hash.empty();
      case Kind::kList:
        return list.empty();
      case Kind::kSet:
        return set.empty();
      case Kind::kZSet:
        return zset.empty();
    }
    return false;
  }
};

// Reply texts in the form of Describe() (test_helpers.h).
std::string Int(long long v) { return "int:" + std::to_string(v); }
std::string Bulk(const std::string& s) { return "bulk:" + s; }
std::string Array(const std::vector<std::string>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + items[i];
  return out + "]";
}
std::string Err(const std::string& text) { return "err:" + text; }

// Redis string2ll: optional '-', no leading zeros, no '+', fits int64, "-0" rejected.
bool ParseLL(const std::string& s, long long* out) {
  if (s.empty() || s.size() > 20) return false;
  if (s == "0") return *out = 0, true;
  size_t i = s[0] == '-' ? 1 : 0;
  if (i == s.size() || s[i] < '1' || s[i] > '9') return false;
  unsigned long long v = 0;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    if (v > (UINT64_MAX - 9) / 10) return false;
    v = v * 10 + static_cast<unsigned>(s[i] - '0');
  }
  if (s[0] == '-') {
    if (v > static_cast<unsigned long long>(INT64_MAX) + 1) return false;
    *out = static_cast<long long>(0 - v);
  } else {
    if (v > static_cast<unsigned long long>(INT64_MAX)) return false;
    *out = static_cast<long long>(v);
  }
  return true;
}

// Scores here are multiples of 0.5 or infinite: integers print as integers, halves plainly.
std::string Score(double d) {
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  if (d == std::trunc(d)) return std::to_string(static_cast<long long>(d));
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.17g", d);
  return buf;
}

std::string ScoreArg(double d) { return std::isinf(d) ? (d > 0 ? "+inf" : "-inf") : Score(d); }

// Redis's LRANGE / ZRANGE index rules: [first, last] of a sequence of `len`, or empty.
bool NormalizeRange(long long start, long long stop, long long len, long long* first,
                    long long* last) {
  if (start < 0) start += len;
  if (stop < 0) stop += len;
  if (start < 0) start = 0;
  if (start > stop || start >= len) return false;
  if (stop >= len) stop = len - 1;
  *first = start;
  *last = stop;
  return true;
}

class Model {
 public:
  // Applies `args` and returns the reply Redis would give.
  std::string Apply(const Args& a) {
    const std::string& cmd = a[0];
    if (cmd == "SET") return (*db_)[a[1]] = StringValue(a[2]), "status:OK";
    if (cmd == "SELECT") return current_ = std::stoi(a[1]), db_ = &dbs_[current_], "status:OK";
    if (cmd == "MOVE") return Move(a[1], std::stoi(a[2]));
    if (cmd == "COPY") return Copy(a);
    if (cmd == "SWAPDB")
      return std::swap(dbs_[std::stoi(a[1])], dbs_[std::stoi(a[2])]), "status:OK";
    if (cmd == "DBSIZE") return Int(static_cast<long long>(db_->size()));
    if (cmd == "FLUSHDB") return db_->clear(), "status:OK";
    if (cmd == "DEL") return Del(a);
    if (cmd == "EXISTS") return Exists(a);
    if (cmd == "TYPE") return Type(a[1]);
    if (cmd == "RENAME") return Rename(a[1], a[2]);
    if (cmd == "GET" || cmd == "INCR" || cmd == "APPEND" || cmd == "STRLEN") return String(a);
    if (cmd[0] == 'H') return Hash(a);
    if (cmd[0] == 'L' || cmd[0] == 'R') return List(a);
    if (cmd[0] == 'S') return Set(a);
    if (cmd[0] == 'Z') return ZSet(a);
    return "unknown";
  }

  // Replies whose order Redis leaves unspecified, sorted (pairs kept together).
  static std::string Canonical(const std::string& cmd, const Reply& r) {
    if (r.type != REDIS_REPLY_ARRAY) return Describe(r);
    std::vector<std::string> items;
    if (cmd == "HGETALL") {
      std::vector<std::pair<std::string, std::string>> pairs;
      for (size_t i = 0; i + 1 < r.elements.size(); i += 2) {
        pairs.emplace_back(Describe(r.elements[i]), Describe(r.elements[i + 1]));
      }
      std::sort(pairs.begin(), pairs.end());
      for (auto& [f, v] : pairs) {
        items.push_back(f);
        items.push_back(v);
      }
      return Array(items);
    }
    for (const auto& e : r.elements) items.push_back(Describe(e));
    if (cmd == "SMEMBERS") std::sort(items.begin(), items.end());
    return Array(items);
  }

 private:
  static Value StringValue(const std::string& s) {
    Value v;
    v.type = Kind::kString;
    v.str = s;
    return v;
  }

  // The value at `key` when it has type `t`; nullptr when absent. *wrong when another type.
  Value* Find(const std::string& key, Kind t, bool* wrong) {
    *wrong = false;
    auto it = db_->find(key);
    if (it == db_->end()) return nullptr;
    if (it->second.type != t) *wrong = true;
    return &it->second;
  }

  Value& Create(const std::string& key, Kind t) {
    Value& v = (*db_)[key];
    v = Value();
    v.type = t;
    return v;
  }

  void DropIfEmpty(const std::string& key) {
    auto it = db_->find(key);
    if (it != db_->end() && it->second.empty()) db_->erase(it);
  }

  std::string Move(const std::string& key, int db) {
    if (db == current_) return "err:ERR source and destination objects are the same";
    auto it = db_->find(key);
    if (it == db_->end() || dbs_[db].count(key) != 0) return Int(0);
    dbs_[db][key] = std::move(it->second);
    db_->erase(it);
    return Int(1);
  }

  // COPY src dst [DB n] [REPLACE]
  std::string Copy(const Args& a) {
    int db = current_;
    bool replace = false;
    for (size_t i = 3; i < a.size(); ++i) {
      if (a[i] == "REPLACE") replace = true;
      if (a[i] == "DB") db = std::stoi(a[++i]);
    }
    if (db == current_ && a[1] == a[2])
      return "err:ERR source and destination objects are the same";
    auto it = db_->find(a[1]);
    if (it == db_->end()) return Int(0);
    if (dbs_[db].count(a[2]) != 0 && !replace) return Int(0);
    Value copy = it->second;
    dbs_[db][a[2]] = std::move(copy);
    return Int(1);
  }

  std::string Del(const Args& a) {
    long long n = 0;
    for (size_t i = 1; i < a.size(); ++i) n += static_cast<long long>(db_->erase(a[i]));
    return Int(n);
  }

  std::string Exists(const Args& a) {
    long long n = 0;
    for (size_t i = 1; i < a.size(); ++i) n += static_cast<long long>(db_->count(a[i]));
    return Int(n);
  }

  std::string Type(const std::string& key) {
    auto it = db_->find(key);
    if (it == db_->end()) return "status:none";
    static const char* names[] = {"string", "hash", "list", "set", "zset"};
    return std::string("status:") + names[static_cast<int>(it->second.type)];
  }

  std::string Rename(const std::string& src, const std::string& dst) {
    auto it = db_->find(src);
    if (it == db_->end()) return Err("ERR no such key");
    if (src == dst) return "status:OK";
    Value v = std::move(it->second);
    db_->erase(it);
    (*db_)[dst] = std::move(v);
    return "status:OK";
  }

  std::string String(const Args& a) {
    bool wrong = false;
    Value* v = Find(a[1], Kind::kString, &wrong);
    if (wrong) return kWrongType;
    const std::string& cmd = a[0];
    if (cmd == "GET") return v ? Bulk(v->str) : "nil";
    if (cmd == "STRLEN") return Int(v ? static_cast<long long>(v->str.size()) : 0);
    if (cmd == "APPEND") {
      if (!v) v = &Create(a[1], Kind::kString);
      v->str += a[2];
      return Int(static_cast<long long>(v->str.size()));
    }
    long long n = 0;  // INCR
    if (v && !ParseLL(v->str, &n)) return Err("ERR value is not an integer or out of range");
    if (n == INT64_MAX) return Err("ERR increment or decrement would overflow");
    if (!v) v = &Create(a[1], Kind::kString);
    v->str = std::to_string(n + 1);
    return Int(n + 1);
  }

  std::string Hash(const Args& a) {
    bool wrong = false;
    Value* v = Find(a[1], Kind::kHash, &wrong);
    if (wrong) return kWrongType;
    const std::string& cmd = a[0];
    if (cmd == "HSET") {
      if (!v) v = &Create(a[1], Kind::kHash);
      long long added = 0;
      for (size_t i = 2; i + 1 < a.size(); i += 2) {
        added += v->hash.count(a[i]) ? 0 : 1;
        v->hash[a[i]] = a[i + 1];
      }
      return Int(added);
    }
    if (cmd == "HDEL") {
      long long removed = 0;
      for (size_t i = 2; v && i < a.size(); ++i) removed += v->hash.erase(a[i]);
      DropIfEmpty(a[1]);
      return Int(removed);
    }
    if (cmd == "HGET") {
      if (!v || !v->hash.count(a[2])) return "nil";
      return Bulk(v->hash[a[2]]);
    }
    if (cmd == "HLEN") return Int(v ? static_cast<long long>(v->hash.size()) : 0);
    std::vector<std::string> items;  // HGETALL
    if (v) {
      for (const auto& [f, val] : v->hash) {
        items.push_back(Bulk(f));
        items.push_back(Bulk(val));
      }
    }
    return Array(items);
  }

  std::string List(const Args& a) {
    const std::string& cmd = a[0];
    bool wrong = false;
    Value* v = Find(a[1], Kind::kList, &wrong);
    if (wrong) return kWrongType;
    if (cmd == "LPUSH" || cmd == "RPUSH") {
      if (!v) v = &Create(a[1], Kind::kList);
      for (size_t i = 2; i < a.size(); ++i) {
        if (cmd == "LPUSH") {
          v->list.push_front(a[i]);
        } else {
          v->list.push_back(a[i]);
        }
      }
      return Int(static_cast<long long>(v->list.size()));
    }
    if (cmd == "LPOP" || cmd == "RPOP") {
      bool has_count = a.size() == 3;
      if (!v) return "nil";
      size_t count = has_count ? std::stoul(a[2]) : 1;
      std::vector<std::string> popped;
      while (popped.size() < count && !v->list.empty()) {
        if (cmd == "LPOP") {
          popped.push_back(Bulk(v->list.front()));
          v->list.pop_front();
        } else {
          popped.push_back(Bulk(v->list.back()));
          v->list.pop_back();
        }
      }
      DropIfEmpty(a[1]);
      if (!has_count) return popped.empty() ? "nil" : popped[0];
      return Array(popped);
    }
    if (cmd == "LLEN") return Int(v ? static_cast<long long>(v->list.size()) : 0);
    if (cmd == "LRANGE") {
      std::vector<std::string> items;
      long long first = 0, last = 0, len = v ? static_cast<long long>(v->list.size()) : 0;
      if (v && NormalizeRange(std::stoll(a[2]), std::stoll(a[3]), len, &first, &last)) {
        for (long long i = first; i <= last; ++i) items.push_back(Bulk(v->list[i]));
      }
      return Array(items);
    }
    if (cmd == "LSET") {
      if (!v) return Err("ERR no such key");
      long long index = std::stoll(a[2]), len = static_cast<long long>(v->list.size());
      if (index < 0) index += len;
      if (index < 0 || index >= len) return Err("ERR index out of range");
      v->list[index] = a[3];
      return "status:OK";
    }
    // LREM key count element
    long long count = std::stoll(a[2]), removed = 0;
    if (!v) return Int(0);
    auto& l = v->list;
    if (count >= 0) {
      for (auto it = l.begin(); it != l.end() && (count == 0 || removed < count);) {
        if (*it == a[3]) {
          it = l.erase(it);
          ++removed;
        } else {
          ++it;
        }
      }
    } else {
      for (long long i = static_cast<long long>(l.size()) - 1; i >= 0 && removed < -count; --i) {
        if (l[i] == a[3]) {
          l.erase(l.begin() + i);
          ++removed;
        }
      }
    }
    DropIfEmpty(a[1]);
    return Int(removed);
  }

  std::string Set(const Args& a) {
    const std::string& cmd = a[0];
    bool wrong = false;
    Value* v = Find(a[1], Kind::kSet, &wrong);
    if (wrong) return kWrongType;
    if (cmd == "SADD") {
      if (!v) v = &Create(a[1], Kind::kSet);
      long long added = 0;
      for (size_t i = 2; i < a.size(); ++i) added += v->set.insert(a[i]).second ? 1 : 0;
      return Int(added);
    }
    if (cmd == "SREM") {
      long long removed = 0;
      for (size_t i = 2; v && i < a.size(); ++i) removed += v->set.erase(a[i]);
      DropIfEmpty(a[1]);
      return Int(removed);
    }
    if (cmd == "SCARD") return Int(v ? static_cast<long long>(v->set.size()) : 0);
    if (cmd == "SISMEMBER") return Int(v && v->set.count(a[2]) ? 1 : 0);
    std::vector<std::string> items;  // SMEMBERS
    if (v) {
      for (const auto& m : v->set) items.push_back(Bulk(m));
    }
    return Array(items);
  }

  std::string ZSet(const Args& a) {
    const std::string& cmd = a[0];
    if (cmd == "ZADD") {  // scores are parsed before the key is looked at
      for (size_t i = 2; i < a.size(); i += 2) {
        if (a[i] == "abc") return Err("ERR value is not a valid float");
      }
    }
    bool wrong = false;
    Value* v = Find(a[1], Kind::kZSet, &wrong);
    if (wrong) return kWrongType;
    if (cmd == "ZADD") {
      if (!v) v = &Create(a[1], Kind::kZSet);
      long long added = 0;
      for (size_t i = 2; i + 1 < a.size(); i += 2) {
        added += v->zset.count(a[i + 1]) ? 0 : 1;
        v->zset[a[i + 1]] = std::stod(a[i]);
      }
      return Int(added);
    }
    if (cmd == "ZINCRBY") {
      double incr = std::stod(a[2]);
      double score = incr;
      if (v && v->zset.count(a[3])) score = v->zset[a[3]] + incr;
      if (std::isnan(score)) return Err("ERR resulting score is not a number (NaN)");
      if (!v) v = &Create(a[1], Kind::kZSet);
      v->zset[a[3]] = score;
      return Bulk(Score(score));
    }
    if (cmd == "ZREM") {
      long long removed = 0;
      for (size_t i = 2; v && i < a.size(); ++i) removed += v->zset.erase(a[i]);
      DropIfEmpty(a[1]);
      return Int(removed);
    }
    if (cmd == "ZSCORE") {
      if (!v || !v->zset.count(a[2])) return "nil";
      return Bulk(Score(v->zset[a[2]]));
    }
    if (cmd == "ZCARD") return Int(v ? static_cast<long long>(v->zset.size()) : 0);
    // ZRANGE key start stop WITHSCORES
    std::vector<std::pair<double, std::string>> order;
    if (v) {
      for (const auto& [m, s] : v->zset) order.emplace_back(s, m);
    }
    std::sort(order.begin(), order.end());
    std::vector<std::string> items;
    long long first = 0, last = 0;
    if (NormalizeRange(std::stoll(a[2]), std::stoll(a[3]), static_cast<long long>(order.size()),
                       &first, &last)) {
      for (long long i = first; i <= last; ++i) {
        items.push_back(Bulk(order[i].second));
        items.push_back(Bulk(Score(order[i].first)));
      }
    }
    return Array(items);
  }

  static constexpr int kDbs = 4;  // databases the generator SELECTs among
  std::map<std::string, Value> dbs_[kDbs];
  int current_ = 0;
  std::map<std::string, Value>* db_ = &dbs_[0];  // the SELECTed one
};

// Draws random commands over 20 keys, a few fields/members and a few values.
class Generator {
 public:
  explicit Generator(uint64_t seed) : rng_(seed) {}

  Args Next() {
    static const std::vector<std::pair<const char*, int>> kWeights = {
        {"SET", 4},    {"GET", 3},       {"DEL", 2},     {"INCR", 2},    {"APPEND", 2},
        {"STRLEN", 1}, {"TYPE", 2},      {"EXISTS", 2},  {"RENAME", 1},  {"HSET", 6},
        {"HDEL", 4},   {"HGET", 3},      {"HGETALL", 2}, {"HLEN", 2},    {"LPUSH", 5},
        {"RPUSH", 5},  {"LPOP", 3},      {"RPOP", 3},    {"LRANGE", 3},  {"LLEN", 2},
        {"LSET", 2},   {"LREM", 2},      {"SADD", 6},    {"SREM", 4},    {"SMEMBERS", 2},
        {"SCARD", 2},  {"SISMEMBER", 2}, {"ZADD", 6},    {"ZREM", 3},    {"ZSCORE", 2},
        {"ZRANGE", 3}, {"ZCARD", 2},     {"ZINCRBY", 3}, {"SELECT", 3},  {"MOVE", 2},
        {"COPY", 3},   {"SWAPDB", 1},    {"DBSIZE", 1},  {"FLUSHDB", 1},
    };
    static const int total = [] {
      int sum = 0;
      for (const auto& w : kWeights) sum += w.second;
      return sum;
    }();
    int pick = Uniform(0, total - 1);
    std::string cmd;
    for (const auto& [name, weight] : kWeights) {
      if (pick < weight) {
        cmd = name;
        break;
      }
      pick -= weight;
    }
    if (cmd == "SELECT") return {cmd, Db()};
    if (cmd == "SWAPDB") return {cmd, Db(), Db()};
    // FLUSHDB empties a whole database: rarer than its weight, or little would survive.
    if (cmd == "DBSIZE" || cmd == "FLUSHDB") return {Uniform(0, 3) == 0 ? cmd : "DBSIZE"};
    Args a = {cmd, Key()};
    if (cmd == "MOVE") {
      a.push_back(Db());
    } else if (cmd == "COPY") {
      a.push_back(Key());
      if (Uniform(0, 1) == 0) {
        a.push_back("DB");
        a.push_back(Db());
      }
      if (Uniform(0, 1) == 0) a.push_back("REPLACE");
    } else if (cmd == "SET") {
      a.push_back(StringValue());
    } else if (cmd == "DEL" || cmd == "EXISTS") {
      for (int i = Uniform(0, 2); i > 0; --i) a.push_back(Key());
    } else if (cmd == "APPEND") {
      a.push_back(Pick({"x", "1", "0", "ab", ""}));
    } else if (cmd == "RENAME") {
      a.push_back(Key());
    } else if (cmd == "HSET") {
      for (int i = Uniform(1, 3); i > 0; --i) {
        a.push_back(Member("f"));
        a.push_back(StringValue());
      }
    } else if (cmd == "HDEL" || cmd == "SREM" || cmd == "ZREM") {
      for (int i = Uniform(1, 3); i > 0; --i) a.push_back(Member(cmd == "HDEL" ? "f" : "m"));
    } else if (cmd == "HGET") {
      a.push_back(Member("f"));
    } else if (cmd == "LPUSH" || cmd == "RPUSH") {
      for (int i = Uniform(1, 4); i > 0; --i) a.push_back(Member("e"));
    } else if (cmd == "LPOP" || cmd == "RPOP") {
      if (Uniform(0, 2) == 0) a.push_back(std::to_string(Uniform(0, 3)));
    } else if (cmd == "LRANGE" || cmd == "ZRANGE") {
      a.push_back(std::to_string(Uniform(-6, 6)));
      a.push_back(std::to_string(Uniform(-6, 6)));
      if (cmd == "ZRANGE") a.push_back("WITHSCORES");
    } else if (cmd == "LSET") {
      a.push_back(std::to_string(Uniform(-6, 6)));
      a.push_back(Member("e"));
    } else if (cmd == "LREM") {
      a.push_back(std::to_string(Uniform(-2, 2)));
      a.push_back(Member("e"));
    } else if (cmd == "SADD") {
      for (int i = Uniform(1, 4); i > 0; --i) a.push_back(Member("m"));
    } else if (cmd == "SISMEMBER" || cmd == "ZSCORE") {
      a.push_back(Member("m"));
    } else if (cmd == "ZADD") {
      for (int i = Uniform(1, 3); i > 0; --i) {
        a.push_back(Uniform(0, 60) == 0 ? "abc" : ScoreArg(RandomScore()));
        a.push_back(Member("m"));
      }
    } else if (cmd == "ZINCRBY") {
      a.push_back(ScoreArg(RandomScore()));
      a.push_back(Member("m"));
    }
    return a;
  }

 private:
  int Uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  std::string Pick(const std::vector<const char*>& options) {
    return options[static_cast<size_t>(Uniform(0, static_cast<int>(options.size()) - 1))];
  }
  std::string Key() { return "key:" + std::to_string(Uniform(0, 19)); }
  std::string Db() { return std::to_string(Uniform(0, 3)); }
  std::string Member(const char* prefix) { return prefix + std::to_string(Uniform(0, 7)); }
  std::string StringValue() {
    return Pick({"0", "1", "-5", "42", "abc", "", "9223372036854775806", "3.5", "007", "v"});
  }
  double RandomScore() {
    int r = Uniform(0, 40);
    if (r == 0) return std::numeric_limits<double>::infinity();
    if (r == 1) return -std::numeric_limits<double>::infinity();
    return Uniform(-20, 20) / 2.0;
  }

  std::mt19937_64 rng_;
};

uint64_t EnvNumber(const char* name, uint64_t fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? std::strtoull(value, nullptr, 10) : fallback;
}

std::string CommandLine(const Args& a) {
  std::string out;
  for (const auto& arg : a) out += (out.empty() ? "" : " ") + ("'" + arg + "'");
  return out;
}

}  // namespace

TEST_CASE("randomized model test: replies match a model of Redis semantics", "[model]") {
  const uint64_t ops = EnvNumber("MODEL_OPS", 20000);
  const uint64_t seed = EnvNumber("MODEL_SEED", 20240611);
  const int external_port = static_cast<int>(EnvNumber("MODEL_AGAINST_PORT", 0));
  std::printf("model test: seed=%llu ops=%llu%s\n", static_cast<unsigned long long>(seed),
              static_cast<unsigned long long>(ops),
              external_port ? (" against port " + std::to_string(external_port)).c_str() : "");
  std::fflush(stdout);

  std::unique_ptr<TestServer> server;
  if (external_port == 0) server = std::make_unique<TestServer>();
  Client c(external_port ? external_port : server->port());
  if (external_port) {
    REQUIRE(Describe(c.Command({"FLUSHALL"})) == "status:OK");
    REQUIRE(Describe(c.Command({"SELECT", "0"})) == "status:OK");
  }

  Model model;
  Generator gen(seed);
  std::map<std::string, uint64_t> errors_seen;  // how often each kind of error came up
  // Transactions: every ~25th step is MULTI, 1-5 generated commands (+QUEUED each) and then
  // EXEC (the model applies them in order; each array entry is checked as that command's reply),
  // DISCARD, or an unknown command followed by EXEC (EXECABORT, nothing applied). Some are
  // preceded by a WATCH of a key nobody else writes: EXEC must still run.
  std::mt19937_64 tx_rng(seed ^ 0x9e3779b97f4a7c15ull);
  uint64_t transactions = 0, discarded = 0, aborted = 0;
  auto tx_uniform = [&](int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(tx_rng);
  };
  for (uint64_t i = 0; i < ops; ++i) {
    if (tx_uniform(0, 24) == 0) {
      const bool watch = tx_uniform(0, 2) == 0;
      if (watch)
        REQUIRE(Describe(c.Command({"WATCH", "key:" + std::to_string(tx_uniform(0, 19))})) ==
                "status:OK");
      REQUIRE(Describe(c.Command({"MULTI"})) == "status:OK");
      std::vector<Args> queued;
      for (int n = tx_uniform(1, 5); n > 0; --n) {
        queued.push_back(gen.Next());
        std::string reply = Describe(c.Command(queued.back()));
        if (reply != "status:QUEUED") {
          FAIL("op " << i << " (seed " << seed << "): queued " << CommandLine(queued.back())
                     << " got " << reply);
        }
      }
      const int ending = tx_uniform(0, 9);
      if (ending == 0) {
        REQUIRE(Describe(c.Command({"DISCARD"})) == "status:OK");
        ++discarded;
      } else if (ending == 1) {
        REQUIRE(Describe(c.Command({"NOSUCHCOMMAND"})).rfind("err:ERR unknown command", 0) == 0);
        REQUIRE(Describe(c.Command({"EXEC"})) ==
                "err:EXECABORT Transaction discarded because of previous errors.");
        ++aborted;
      } else {
        Reply exec = c.Command({"EXEC"});
        if (exec.type != REDIS_REPLY_ARRAY || exec.elements.size() != queued.size()) {
          FAIL("op " << i << " (seed " << seed << "): EXEC replied " << Describe(exec));
        }
        for (size_t q = 0; q < queued.size(); ++q) {
          std::string expected = model.Apply(queued[q]);
          std::string actual = Model::Canonical(queued[q][0], exec.elements[q]);
          if (actual != expected) {
            FAIL("op " << i << " (seed " << seed << "): in EXEC, " << CommandLine(queued[q])
                       << "\n  expected: " << expected << "\n  actual:   " << actual);
          }
        }
        ++transactions;
      }
      continue;
    }
    Args args = gen.Next();
    std::string expected = model.Apply(args);
    std::string actual = Model::Canonical(args[0], c.Command(args));
    if (actual != expected) {
      FAIL("op " << i << " (seed " << seed << "): " << CommandLine(args)
                 << "\n  expected: " << expected << "\n  actual:   " << actual);
    }
    if (expected.rfind("err:", 0) == 0) ++errors_seen[expected];
  }
  std::printf("model test: %llu transactions executed, %llu discarded, %llu aborted\n",
              static_cast<unsigned long long>(transactions),
              static_cast<unsigned long long>(discarded), static_cast<unsigned long long>(aborted));
  // The generator must reach the interesting paths, not just pass.
  if (ops >= 10000) {
    CHECK(transactions > 100);
    CHECK(discarded > 10);
    CHECK(aborted > 10);
    CHECK(errors_seen[kWrongType] > 100);
    CHECK(errors_seen["err:ERR no such key"] > 0);
    CHECK(errors_seen["err:ERR index out of range"] > 0);
    CHECK(errors_seen["err:ERR value is not an integer or out of range"] > 0);
  }
  // Finally the whole key space of every database, key by key.
  for (int db = 0; db < 4; ++db) {
    Args select = {"SELECT", std::to_string(db)};
    REQUIRE(Describe(c.Command(select)) == model.Apply(select));
    for (int k = 0; k < 20; ++k) {
      std::string key = "key:" + std::to_string(k);
      CHECK(Model::Canonical("TYPE", c.Command({"TYPE", key})) == model.Apply({"TYPE", key}));
      CHECK(Model::Canonical("GET", c.Command({"GET", key})) == model.Apply({"GET", key}));
    }
    CHECK(Describe(c.Command({"DBSIZE"})) == model.Apply({"DBSIZE"}));
  }
}

}  // namespace model_test
