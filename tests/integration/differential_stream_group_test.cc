// Differential test of the stream consumer-group commands and XREAD ([differential][stream]
// [group]): random sequences of XADD, XGROUP (every subcommand), XREADGROUP (`>`, history, NOACK,
// COUNT, several keys), XREAD (`$`, ids, COUNT), XACK, XPENDING (both forms, IDLE, consumer),
// XCLAIM (JUSTID, FORCE, RETRYCOUNT, LASTID, IDLE/TIME), XAUTOCLAIM, XINFO (STREAM [FULL],
// GROUPS, CONSUMERS, HELP), XSETID, XDEL, XTRIM and hostile arguments, run on rockcache and on a
// reference redis-server 7.0. Replies are compared byte for byte, except the values that read a
// clock or describe Redis's memory layout: idle times, seen and delivery times and the radix tree
// figures are masked in both replies first (every other byte must be equal). Min-idle arguments
// are 0 or an hour, so which entries qualify never depends on timing.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdio>
#include <string>
#include <vector>

#include "tests/support/differential.h"
#include "tests/support/differential_peer.h"
#include "tests/support/test_server.h"

using rockcache::testing::ReferenceRedis;
using rockcache::testing::TestServer;
using namespace rockcache::testing::differential;  // NOLINT

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace differential_stream_group_test {

namespace {

// A RESP2 reply re-serialised with the clock-dependent integers masked. `mask_next` names map
// keys whose value is masked; in XPENDING's extended form the idle time (3rd of 4) is masked.
class Masker {
 public:
  Masker(const std::string& raw, bool pending_form) : raw_(raw), pending_(pending_form) {}

  std::string Run() {
    std::string out;
    Value(&out, 0);
    return pos_ == raw_.size() ? out : raw_;  // unparsed tail: compare raw
  }

 private:
  std::string Line() {
    size_t nl = raw_.find("\r\n", pos_);
    if (nl == std::string::npos) {
      pos_ = raw_.size();
      return "";
    }
    std::string line = raw_.substr(pos_, nl - pos_);
    pos_ = nl + 2;
    return line;
  }

  // Appends the value at pos_; returns its bulk text (for map keys) or "".
  std::string Value(std::string* out, int depth) {
    if (pos_ >= raw_.size()) return "";
    std::string line = Line();
    if (line.empty()) return "";
    char type = line[0];
    if (type == '$') {
      long n = std::atol(line.c_str() + 1);
      if (n < 0) return out->append(line + "\r\n"), "";
      std::string text = raw_.substr(pos_, static_cast<size_t>(n));
      pos_ += static_cast<size_t>(n) + 2;
      out->append(line + "\r\n" + text + "\r\n");
      return text;
    }
    if (type == '*') {
      long n = std::atol(line.c_str() + 1);
      out->append(line + "\r\n");
      bool mask = false;
      for (long i = 0; i < n; ++i) {
        std::string item;
        const size_t at = pos_;
        std::string text = Value(&item, depth + 1);
        bool is_int = raw_[at] == ':';
        if (is_int && (mask || (pending_ && n == 4 && i == 2 && depth == 1) ||
                       std::atoll(item.c_str() + 1) > 1000000000000LL)) {
          item = ":<masked>\r\n";
        }
        mask = text == "idle" || text == "seen-time" || text == "radix-tree-keys" ||
               text == "radix-tree-nodes";
        out->append(item);
      }
      return "";
    }
    out->append(line + "\r\n");
    return "";
  }

  const std::string& raw_;
  bool pending_;
  size_t pos_ = 0;
};

void Compare(Differ& d, const std::string& f, const Command& cmd) {
  std::string mine = d.Ours(cmd);
  std::string reference = d.Theirs(cmd);
  const bool pending_form = cmd.size() >= 6 && (cmd[0] == "XPENDING" || cmd[0] == "xpending");
  const std::string a = Masker(mine, pending_form).Run();
  const std::string b = Masker(reference, pending_form).Run();
  const bool same = a == b;
  static const bool trace = EnvInt("ROCKCACHE_DIFF_TRACE", 0) != 0;
  if (trace) {  // every command and redis-server's reply, to replay a mismatch's history
    std::string line;
    for (const auto& arg : cmd) line += arg + " ";
    std::string shown;
    for (char c : reference.substr(0, 200)) shown += (c == '\r' || c == '\n') ? ' ' : c;
    std::printf("trace %s-> %s\n", line.c_str(), shown.c_str());
  }
  if (!same) {  // where the masked replies part (the Differ prints their beginnings)
    size_t at = 0;
    while (at < a.size() && at < b.size() && a[at] == b[at]) ++at;
    const size_t from = at > 60 ? at - 60 : 0;
    auto show = [](std::string t) {
      std::string o;
      for (char c : t)
        o += c == '\r' ? std::string("\\r") : c == '\n' ? std::string("\\n") : std::string(1, c);
      return o;
    };
    std::printf("  differ at byte %zu: redis-server ...%s\n  rockcache    ...%s\n", at,
                show(b.substr(from, 160)).c_str(), show(a.substr(from, 160)).c_str());
  }
  d.Record(f, cmd, same, mine, reference);
}

void RunGroups(Differ& d, Rng& r, int commands) {
  const std::string f = "xgroup";
  const std::vector<std::string> keys = {"s0", "s1"};
  const std::vector<std::string> groups = {"g0", "g1", "g2"};
  const std::vector<std::string> consumers = {"c0", "c1", "c2", "c3"};
  Compare(d, f, {"SET", "str", "v"});
  int top = 1;
  auto key = [&]() {
    if (r.Chance(0.03)) return std::string("str");
    if (r.Chance(0.03)) return std::string("nokey");
    return r.Pick(keys);
  };
  auto group = [&]() { return r.Chance(0.05) ? std::string("nog") : r.Pick(groups); };
  auto consumer = [&]() { return r.Pick(consumers); };
  auto id = [&]() {
    int kind = r.Int(0, 99);
    int low = std::max(0, top - 12);
    if (kind < 75) return I(r.Int(low, top + 1)) + "-" + I(r.Int(0, 2));
    if (kind < 90) return I(r.Int(low, top + 1));
    return r.Pick(std::vector<std::string>{"0-0", "0", "x", "-1", "+", "-",
                                           "18446744073709551615-18446744073709551615"});
  };
  auto count = [&]() { return I(r.Int(r.Chance(0.05) ? -1 : 0, 4)); };
  for (int n = 0; n < commands; ++n) {
    const int op = r.Int(0, 119);
    const std::string k = key();
    if (op < 22) {
      top += r.Int(0, 2);
      Compare(d, f, {"XADD", k, I(top) + "-" + I(r.Int(0, 3)), "f", I(r.Int(0, 99))});
    } else if (op < 30) {
      Command cmd = {"XGROUP", "CREATE", k, group(),
                     r.Chance(0.3) ? "$" : (r.Chance(0.5) ? "0" : id())};
      if (r.Chance(0.3)) cmd.push_back("MKSTREAM");
      if (r.Chance(0.2)) cmd.insert(cmd.end(), {"ENTRIESREAD", I(r.Int(-2, 6))});
      if (r.Chance(0.03)) cmd.push_back("BOGUS");
      Compare(d, f, cmd);
    } else if (op < 33) {
      Command cmd = {"XGROUP", "SETID", k, group(), r.Chance(0.3) ? "$" : id()};
      if (r.Chance(0.3)) cmd.insert(cmd.end(), {"ENTRIESREAD", I(r.Int(-1, 6))});
      Compare(d, f, cmd);
    } else if (op < 35) {
      Compare(d, f, {"XGROUP", "DESTROY", k, group()});
    } else if (op < 38) {
      Compare(d, f,
              {"XGROUP", r.Chance(0.5) ? "CREATECONSUMER" : "DELCONSUMER", k, group(), consumer()});
    } else if (op < 58) {
      Command cmd = {"XREADGROUP", "GROUP", group(), consumer()};
      if (r.Chance(0.5)) cmd.insert(cmd.end(), {"COUNT", count()});
      if (r.Chance(0.15)) cmd.push_back("NOACK");
      cmd.push_back("STREAMS");
      const bool two = r.Chance(0.2);
      cmd.push_back(k);
      if (two) cmd.push_back(k == "s0" ? "s1" : "s0");
      for (int i = 0; i < (two ? 2 : 1); ++i) {
        cmd.push_back(r.Chance(0.7) ? ">" : (r.Chance(0.5) ? "0" : id()));
      }
      if (r.Chance(0.02)) cmd.push_back("extra");
      Compare(d, f, cmd);
    } else if (op < 66) {
      Command cmd = {"XREAD"};
      if (r.Chance(0.5)) cmd.insert(cmd.end(), {"COUNT", count()});
      cmd.push_back("STREAMS");
      const bool two = r.Chance(0.3);
      cmd.push_back(k);
      if (two) cmd.push_back(k == "s0" ? "s1" : "s0");
      for (int i = 0; i < (two ? 2 : 1); ++i) {
        cmd.push_back(r.Chance(0.2) ? "$" : (r.Chance(0.3) ? "0" : id()));
      }
      Compare(d, f, cmd);
    } else if (op < 76) {
      Command cmd = {"XACK", k, group()};
      int ids = r.Int(1, 3);
      for (int i = 0; i < ids; ++i) cmd.push_back(id());
      Compare(d, f, cmd);
    } else if (op < 84) {
      Command cmd = {"XPENDING", k, group()};
      if (r.Chance(0.7)) {
        if (r.Chance(0.3)) cmd.insert(cmd.end(), {"IDLE", r.Chance(0.5) ? "0" : "3600000"});
        cmd.push_back(r.Chance(0.5) ? "-" : id());
        cmd.push_back(r.Chance(0.5) ? "+" : id());
        cmd.push_back(count());
        if (r.Chance(0.4)) cmd.push_back(consumer());
      }
      Compare(d, f, cmd);
    } else if (op < 92) {
      Command cmd = {"XCLAIM", k, group(), consumer(), r.Chance(0.7) ? "0" : "3600000"};
      int ids = r.Int(r.Chance(0.1) ? 0 : 1, 3);
      for (int i = 0; i < ids; ++i) cmd.push_back(id());
      if (r.Chance(0.3)) cmd.push_back("JUSTID");
      if (r.Chance(0.2)) cmd.push_back("FORCE");
      if (r.Chance(0.2)) cmd.insert(cmd.end(), {"RETRYCOUNT", I(r.Int(0, 5))});
      if (r.Chance(0.1)) cmd.insert(cmd.end(), {"LASTID", id()});
      if (r.Chance(0.1)) cmd.insert(cmd.end(), {"IDLE", "0"});
      if (r.Chance(0.03)) cmd.push_back("BOGUS");
      Compare(d, f, cmd);
    } else if (op < 98) {
      Command cmd = {"XAUTOCLAIM",
                     k,
                     group(),
                     consumer(),
                     r.Chance(0.8) ? "0" : "3600000",
                     r.Chance(0.5) ? "0" : id()};
      if (r.Chance(0.5)) cmd.insert(cmd.end(), {"COUNT", I(r.Int(r.Chance(0.05) ? 0 : 1, 4))});
      if (r.Chance(0.3)) cmd.push_back("JUSTID");
      Compare(d, f, cmd);
    } else if (op < 106) {
      int kind = r.Int(0, 4);
      if (kind == 0) {
        Compare(d, f, {"XINFO", "GROUPS", k});
      } else if (kind == 1) {
        Compare(d, f, {"XINFO", "CONSUMERS", k, group()});
      } else if (kind == 2) {
        Compare(d, f, {"XINFO", "STREAM", k});
      } else if (kind == 3) {
        Command cmd = {"XINFO", "STREAM", k, "FULL"};
        if (r.Chance(0.5)) cmd.insert(cmd.end(), {"COUNT", I(r.Int(0, 3))});
        Compare(d, f, cmd);
      } else {
        Compare(d, f, {"XINFO", r.Chance(0.5) ? "HELP" : "BOGUS"});
      }
    } else if (op < 110) {
      const int to = top + r.Int(0, 2);
      Command cmd = {"XSETID", k, r.Chance(0.7) ? I(to) + "-0" : id()};
      if (r.Chance(0.3)) cmd.insert(cmd.end(), {"ENTRIESADDED", I(r.Int(-1, 40))});
      if (r.Chance(0.3)) cmd.insert(cmd.end(), {"MAXDELETEDID", id()});
      Compare(d, f, cmd);
      top = std::max(top, to);
    } else if (op < 114) {
      Compare(d, f, {"XDEL", k, id()});
    } else if (op < 116) {
      Compare(d, f, {"XTRIM", k, "MAXLEN", I(r.Int(0, 8))});
    } else if (op < 117) {
      Compare(d, f, {"XGROUP", r.Chance(0.5) ? "HELP" : "NOPE", k});
    } else if (op < 118) {
      Compare(d, f, {"DEL", k});
    } else {
      Compare(d, f, {"XLEN", k});
    }
  }
}

}  // namespace

TEST_CASE("Differential: stream consumer groups and XREAD equal redis-server's",
          "[differential][stream][group]") {
  std::string redis = ReferenceRedis::Binary();
  if (redis.empty()) {
    WARN("redis-server not installed: differential test skipped");
    return;
  }
  ReferenceRedis reference(redis);
  TestServer server;
  Differ d(server.port(), reference.port());
  uint64_t seed = static_cast<uint64_t>(EnvInt("ROCKCACHE_DIFF_SEED", 0));
  if (seed == 0) seed = std::random_device{}() | 1;
  const int commands = EnvInt("ROCKCACHE_DIFF_COMMANDS", 3000);
  std::printf("differential: seed %llu (ROCKCACHE_DIFF_SEED to replay), %d commands\n",
              static_cast<unsigned long long>(seed), commands);
  d.Both("setup", {"FLUSHALL"});
  Rng rng(seed);
  RunGroups(d, rng, commands);
  const auto& stats = d.stats("xgroup");
  std::printf("differential: %-8s %5d commands (%d non-empty arrays), %d mismatches\n", "xgroup",
              stats.commands, stats.nonempty_arrays, stats.mismatches);
  CHECK(stats.nonempty_arrays > commands / 10);
  CHECK(stats.mismatches == 0);
}

}  // namespace differential_stream_group_test
