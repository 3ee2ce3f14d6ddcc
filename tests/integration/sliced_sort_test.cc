// Sliced SORT / SORT_RO (server/slicing/sliced_sort.h) over a real server: big lists, sets and
// sorted sets sorted in many steps (slice-items set small) must reply byte for byte what the
// unsliced code replies (the same command inside MULTI/EXEC, which never slices) and what a
// model computes here — numeric, ALPHA, BY keys and hash fields, BY nosort, GET (# and
// ->field), LIMIT, DESC, ties in input order; keep pipeline order; read every BY / GET key on
// the snapshot of the command's start while a writer changes them; equal redis-server's; close
// a reader too slow for its output limit; and survive a client that goes away mid-command.
#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "tests/support/differential.h"
#include "tests/support/differential_peer.h"
#include "tests/support/test_helpers.h"
#include "tests/support/test_server.h"

using rockcache::testing::Client;
using rockcache::testing::Describe;
using rockcache::testing::InfoFields;
using rockcache::testing::InfoText;
using rockcache::testing::RawConnection;
using rockcache::testing::ReferenceRedis;
using rockcache::testing::Reply;
using rockcache::testing::Resp;
using rockcache::testing::Run;
using rockcache::testing::SleepMs;
using rockcache::testing::TestServer;

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace sliced_sort_test {

namespace {

constexpr int kN = 3000;

std::string Name(int i) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "e%05d", i);
  return buf;
}

long long Stat(Client& c, const char* field) {
  return std::stoll(InfoFields(InfoText(c, "stats"))[field]);
}

std::vector<std::string> Strings(const Reply& r) {
  INFO(Describe(r).substr(0, 200));
  REQUIRE(r.type == REDIS_REPLY_ARRAY);
  std::vector<std::string> out;
  for (const auto& e : r.elements) out.push_back(e.str);
  return out;
}

// The RESP2 bytes of a reply (RESP2 has one encoding per reply).
std::string Encode(const Reply& r) {
  switch (r.type) {
    case REDIS_REPLY_STRING:
      return "$" + std::to_string(r.str.size()) + "\r\n" + r.str + "\r\n";
    case REDIS_REPLY_NIL:
      return "$-1\r\n";
    case REDIS_REPLY_ERROR:
      return "-" + r.str + "\r\n";
    case REDIS_REPLY_STATUS:
      return "+" + r.str + "\r\n";
    case REDIS_REPLY_INTEGER:
      return ":" + std::to_string(r.integer) + "\r\n";
    default: {
      std::string out = "*" + std::to_string(r.elements.size()) + "\r\n";
      for (const auto& e : r.elements) out += Encode(e);
      return out;
    }
  }
}

// The model's data: list l (kN elements, some repeated, in a scrambled order), list nl (numbers
// with many ties), set s, sorted set z (scores with ties); weights w_<e> (numbers with ties; a
// few missing, one a hash), hash fields h_<e> -> f (words with ties; a few missing).
struct Data {
  std::vector<std::string> l, nl;
  std::map<std::string, std::string> w, hf;
};

Data Fill(Client& c) {
  Data d;
  std::vector<std::string> rpush = {"RPUSH", "l"}, nrpush = {"RPUSH", "nl"}, sadd = {"SADD", "s"},
                           zadd = {"ZADD", "z"}, mset = {"MSET"};
  auto flush = [&](std::vector<std::string>* cmd, size_t head) {
    if (cmd->size() > head) c.Command(*cmd);
    cmd->resize(head);
  };
  for (int i = 0; i < kN; ++i) {
    const std::string e = Name((i * 7919) % 2500);  // 500 elements appear twice
    d.l.push_back(e);
    rpush.push_back(e);
    d.nl.push_back(std::to_string((i * 31) % 400 - 200) + (i % 3 == 0 ? ".5" : ""));
    nrpush.push_back(d.nl.back());
    sadd.push_back(Name(i));
    zadd.push_back(std::to_string((i * 37) % 100));
    zadd.push_back(Name(i));
    if (i % 97 != 5) {  // some weights missing
      d.w[Name(i)] = std::to_string((i * 13) % 50);
      mset.push_back("w_" + Name(i));
      mset.push_back(d.w[Name(i)]);
    }
    if (i % 89 != 3) {
      d.hf[Name(i)] = "word" + std::to_string((i * 11) % 70);
      c.Command({"HSET", "h_" + Name(i), "f", d.hf[Name(i)], "g", std::to_string(i % 10)});
    }
    if (rpush.size() == 502) {
      flush(&rpush, 2), flush(&nrpush, 2), flush(&sadd, 2), flush(&zadd, 2), flush(&mset, 1);
    }
  }
  flush(&rpush, 2), flush(&nrpush, 2), flush(&sadd, 2), flush(&zadd, 2), flush(&mset, 1);
  // A weight that is a hash reads as missing.
  d.w.erase(Name(7));
  c.Command({"DEL", "w_" + Name(7)});
  c.Command({"HSET", "w_" + Name(7), "x", "1"});
  return d;
}

// The reply of `cmd` inside MULTI/EXEC: the unsliced code's.
Reply Unsliced(Client& c, const std::vector<std::string>& cmd) {
  c.Command({"MULTI"});
  c.Command(cmd);
  Reply exec = c.Command({"EXEC"});
  REQUIRE(exec.elements.size() == 1);
  return exec.elements[0];
}

// `cmd` sliced equals `cmd` unsliced, byte for byte; returns the sliced reply.
Reply Same(Client& c, const std::vector<std::string>& cmd) {
  std::string text;
  for (const auto& a : cmd) text += a + " ";
  INFO(text);
  Reply sliced = c.Command(cmd);
  Reply unsliced = Unsliced(c, cmd);
  CHECK(Encode(sliced) == Encode(unsliced));
  return sliced;
}

// A stable sort of `v` by `less`.
template <typename Less>
std::vector<std::string> Sorted(std::vector<std::string> v, Less less) {
  std::stable_sort(v.begin(), v.end(), less);
  return v;
}

}  // namespace

TEST_CASE("a big SORT is sliced and replies exactly what the unsliced SORT replies",
          "[sort][slicing]") {
  TestServer server({"--slice-items", "64"});
  Client c(server.port());
  const Data d = Fill(c);
  const long long sliced = Stat(c, "sliced_commands");

  // Numeric: by value, equal values by bytes.
  auto by_number = [](const std::string& a, const std::string& b) {
    double x = std::stod(a), y = std::stod(b);
    return x != y ? x < y : a < b;
  };
  const std::vector<std::string> numbers = Sorted(d.nl, by_number);
  CHECK(Strings(Same(c, {"SORT", "nl"})) == numbers);
  std::vector<std::string> desc =
      Sorted(d.nl, [&](const std::string& a, const std::string& b) { return by_number(b, a); });
  CHECK(Strings(Same(c, {"SORT_RO", "nl", "DESC"})) == desc);
  CHECK(Strings(Same(c, {"SORT", "nl", "LIMIT", "100", "250"})) ==
        std::vector<std::string>(numbers.begin() + 100, numbers.begin() + 350));
  Same(c, {"SORT", "nl", "DESC", "LIMIT", "2900", "500"});
  Same(c, {"SORT", "nl", "LIMIT", "-5", "10"});
  CHECK(Strings(Same(c, {"SORT", "nl", "LIMIT", "5000", "10"})).empty());
  CHECK(Strings(Same(c, {"SORT", "nl", "LIMIT", "0", "0"})).empty());

  // ALPHA: byte order (the server's C locale), ties (repeated elements) in input order.
  CHECK(Strings(Same(c, {"SORT", "l", "ALPHA"})) == Sorted(d.l, std::less<std::string>()));
  Same(c, {"SORT", "l", "ALPHA", "DESC", "LIMIT", "10", "50"});
  std::vector<std::string> names;
  for (int i = 0; i < kN; ++i) names.push_back(Name(i));
  CHECK(Strings(Same(c, {"SORT", "s", "ALPHA"})) == names);
  Same(c, {"SORT", "z", "ALPHA", "DESC"});

  // BY a key: numeric weights with ties (then element bytes); missing weights score 0.
  auto weight = [&](const std::string& e) {
    auto it = d.w.find(e);
    return it == d.w.end() ? 0.0 : std::stod(it->second);
  };
  auto by_weight = [&](const std::string& a, const std::string& b) {
    double x = weight(a), y = weight(b);
    return x != y ? x < y : a < b;
  };
  CHECK(Strings(Same(c, {"SORT", "l", "BY", "w_*"})) == Sorted(d.l, by_weight));
  Same(c, {"SORT", "l", "BY", "w_*", "DESC", "LIMIT", "7", "1000"});
  Same(c, {"SORT", "s", "BY", "w_*", "GET", "#", "GET", "w_*"});
  Same(c, {"SORT_RO", "z", "BY", "w_*", "DESC", "GET", "h_*->f"});

  // BY a hash field, ALPHA: missing first, ties in input order (a stable sort).
  auto field = [&](const std::string& e) {
    auto it = d.hf.find(e);
    return it == d.hf.end() ? std::string() : it->second;
  };
  auto by_field = [&](const std::string& a, const std::string& b) {
    bool ha = d.hf.count(a) > 0, hb = d.hf.count(b) > 0;
    if (ha != hb) return !ha;
    return field(a) < field(b);
  };
  std::vector<std::string> expected;
  for (const auto& e : Sorted(d.l, by_field)) {
    expected.push_back(e);
    expected.push_back(field(e));
    expected.push_back(d.w.count(e) ? d.w.at(e) : "");
  }
  CHECK(Strings(Same(c, {"SORT", "l", "BY", "h_*->f", "ALPHA", "GET", "#", "GET", "h_*->f", "GET",
                         "w_*"})) == expected);
  Same(c, {"SORT", "l", "BY", "h_*->f", "ALPHA", "DESC", "LIMIT", "100", "100"});
  Same(c, {"SORT", "s", "BY", "h_*->g", "GET", "h_*->nofield", "GET", "nokey_*", "GET", "k"});
  Same(c, {"SORT", "z", "BY", "h_*->g", "DESC", "GET", "#"});

  // BY nosort: natural order (a list's, a sorted set's by score; a set's by bytes), windows.
  CHECK(Strings(Same(c, {"SORT", "l", "BY", "nosort", "GET", "#"})) == d.l);
  std::vector<std::string> reversed(d.l.rbegin(), d.l.rend());
  CHECK(Strings(Same(c, {"SORT", "l", "BY", "nosort", "DESC"})) == reversed);
  CHECK(Strings(Same(c, {"SORT", "l", "BY", "nosort", "DESC", "LIMIT", "10", "2000"})) ==
        std::vector<std::string>(reversed.begin() + 10, reversed.begin() + 2010));
  Same(c, {"SORT", "l", "BY", "nosort", "LIMIT", "2990", "100", "GET", "w_*", "GET", "#"});
  Same(c, {"SORT", "s", "BY", "nosort", "DESC", "LIMIT", "100", "1500"});
  Same(c, {"SORT", "s", "BY", "nosort", "GET", "h_*->f"});
  Same(c, {"SORT", "z", "BY", "nosort", "DESC", "LIMIT", "5", "1300", "GET", "#", "GET", "w_*"});
  Same(c, {"SORT_RO", "z", "BY", "nosort"});
  CHECK(Strings(Same(c, {"SORT", "s", "BY", "nosort", "LIMIT", "5000", "10"})).empty());
  CHECK(Strings(Same(c, {"SORT", "l", "BY", "nosort", "LIMIT", "0", "0", "GET", "#"})).empty());
  CHECK(Stat(c, "sliced_commands") - sliced >= 25);
  CHECK(Stat(c, "command_slices") > Stat(c, "sliced_commands"));

  // Errors as the unsliced code: the first weight that is not a number, with no reply begun.
  CHECK(Run(c, {"SORT", "l"}) == "err:ERR One or more scores can't be converted into double");
  Same(c, {"SORT", "l"});
  Same(c, {"SORT", "s", "BY", "h_*->f"});
  CHECK(Run(c, {"SORT", "l", "BY", "h_*->f", "LIMIT", "0", "1"}) ==
        "err:ERR One or more scores can't be converted into double");

  // The raw bytes of a sliced reply.
  const std::vector<std::string> cmd = {"SORT", "l", "BY", "w_*", "GET", "#", "GET", "h_*->f"};
  const std::string bytes = Encode(Unsliced(c, cmd));
  RawConnection raw(server.port());
  raw.Send(Resp(cmd) + Resp({"PING"}));
  CHECK(raw.ReadExactly(bytes.size() + 7) == bytes + "+PONG\r\n");
}

TEST_CASE("a big SORT in a pipeline keeps reply order; a client leaving mid-SORT is harmless",
          "[sort][slicing]") {
  TestServer server({"--slice-items", "16", "--slice-usec", "10"});
  Client c(server.port());
  const Data d = Fill(c);
  const std::vector<std::string> sorted = Strings(c.Command({"SORT", "l", "ALPHA"}));
  REQUIRE(sorted.size() == d.l.size());
  c.Append({"SORT", "l", "ALPHA"});
  c.Append({"PING"});
  c.Append({"SET", "after", "1"});
  c.Append({"SORT_RO", "l", "BY", "w_*", "GET", "#", "GET", "h_*->f"});
  c.Append({"GET", "after"});
  Reply r;
  REQUIRE(c.GetReply(&r));
  CHECK(Strings(r) == sorted);
  REQUIRE(c.GetReply(&r));
  CHECK(Describe(r) == "status:PONG");
  REQUIRE(c.GetReply(&r));
  CHECK(Describe(r) == "status:OK");
  REQUIRE(c.GetReply(&r));
  CHECK(r.elements.size() == 2 * d.l.size());
  REQUIRE(c.GetReply(&r));
  CHECK(Describe(r) == "bulk:1");

  for (int round = 0; round < 10; ++round) {
    RawConnection gone(server.port());
    gone.Send(Resp({"SORT", "l", "BY", "w_*", "GET", "h_*->f"}) + Resp({"SORT", "s", "ALPHA"}) +
              Resp({"PING"}));
    // Destroyed at once: closed with the command (hundreds of steps) under way.
  }
  bool settled = false;
  for (int i = 0; i < 600 && !settled; ++i) {
    SleepMs(50);
    settled = InfoFields(InfoText(c, "clients"))["connected_clients"] == "1";
  }
  CHECK(settled);
  Client other(server.port());
  CHECK(Run(other, {"PING"}) == "status:PONG");
  CHECK(Strings(other.Command({"SORT", "l", "ALPHA"})) == sorted);
}

TEST_CASE("a sliced SORT reads its BY and GET keys on one snapshot while a writer changes them",
          "[sort][slicing]") {
  TestServer server({"--slice-items", "8", "--slice-usec", "10"});
  Client c(server.port());
  constexpr int kElements = 2000;
  // Generation g: weight of element i is (i * 7 + g) % 100, written by one MSET (one batch).
  auto generation = [&](int g) {
    std::vector<std::string> mset = {"MSET"};
    for (int i = 0; i < kElements; ++i) {
      mset.push_back("w_" + Name(i));
      mset.push_back(std::to_string((i * 7 + g) % 100));
    }
    return mset;
  };
  std::vector<std::string> rpush = {"RPUSH", "l"};
  for (int i = 0; i < kElements; ++i) rpush.push_back(Name(i));
  c.Command(rpush);
  c.Command(generation(0));
  std::atomic<bool> stop{false};
  std::atomic<int> generations{0};
  std::thread writer([&] {
    Client w(server.port());
    for (int g = 1; !stop; ++g) {
      Reply r;
      if (!w.TryCommand(generation(g), &r)) return;
      generations = g;
    }
  });
  int checked = 0, moved = 0;
  for (int round = 0; round < 12; ++round) {
    const int before = generations.load();
    std::vector<std::string> got =
        Strings(c.Command({"SORT", "l", "BY", "w_*", "GET", "#", "GET", "w_*"}));
    if (generations.load() != before) ++moved;
    REQUIRE(got.size() == 2 * kElements);
    // One generation g for every weight, and the order is that generation's.
    const int i0 = std::stoi(got[0].substr(1));
    const int g = ((std::stoi(got[1]) - i0 * 7) % 100 + 100) % 100;
    bool consistent = true, ordered = true;
    for (int k = 0; k < kElements; ++k) {
      const int i = std::stoi(got[2 * k].substr(1));
      const int w = std::stoi(got[2 * k + 1]);
      consistent = consistent && ((i * 7 + g) % 100) == w;
      if (k > 0) {
        const int prev = std::stoi(got[2 * k - 1]);
        ordered = ordered && (prev < w || (prev == w && got[2 * k - 2] < got[2 * k]));
      }
    }
    INFO("round " << round << " generation " << g);
    CHECK(consistent);
    CHECK(ordered);
    ++checked;
  }
  stop = true;
  writer.join();
  CHECK(checked == 12);
  CHECK(generations > 0);  // the writer did run meanwhile
  WARN("sorts that overlapped a new generation: " << moved);
}

TEST_CASE("SORT over 200,000 elements with the default slicing", "[sort][slicing][big]") {
  TestServer server;
  // A sort of 200,000 elements BY keys: well under a second natively, past the default 10 s
  // timeout in a TSan build on a loaded machine.
  Client c(server.port(), 120000);
  constexpr int kBig = 200000;
  std::vector<std::string> rpush = {"RPUSH", "big"}, mset = {"MSET"};
  std::vector<std::pair<int, int>> model;  // (weight, element index), input order
  for (int i = 0; i < kBig; ++i) {
    const int e = static_cast<int>((static_cast<long long>(i) * 104729) % kBig);
    rpush.push_back(std::to_string(e));
    model.emplace_back(e % 1000, e);
    if (rpush.size() == 1002) c.Command(rpush), rpush.resize(2);
  }
  for (int e = 0; e < kBig; ++e) {
    mset.push_back("bw_" + std::to_string(e));
    mset.push_back(std::to_string(e % 1000));
    if (mset.size() == 2001) c.Command(mset), mset.resize(1);
  }
  if (rpush.size() > 2) c.Command(rpush);
  if (mset.size() > 1) c.Command(mset);
  const long long sliced = Stat(c, "sliced_commands");
  // Weights tie 200 ways; ties by element bytes (the numeric sort's rule).
  std::vector<std::string> expected;
  std::stable_sort(model.begin(), model.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first < b.first
                              : std::to_string(a.second) < std::to_string(b.second);
  });
  for (const auto& [w, e] : model) expected.push_back(std::to_string(e));
  CHECK(Strings(c.Command({"SORT", "big", "BY", "bw_*"})) == expected);
  CHECK(Strings(c.Command({"SORT_RO", "big", "BY", "bw_*", "LIMIT", "1000", "5", "GET", "#"})) ==
        std::vector<std::string>(expected.begin() + 1000, expected.begin() + 1005));
  CHECK(Stat(c, "sliced_commands") - sliced == 2);
  CHECK(Run(c, {"PING"}) == "status:PONG");
}

TEST_CASE("Differential: a sliced SORT equals redis-server's", "[sort][slicing][differential]") {
  std::string redis = ReferenceRedis::Binary();
  if (redis.empty()) {
    WARN("redis-server not installed: differential test skipped");
    return;
  }
  ReferenceRedis reference(redis);
  TestServer server({"--slice-items", "64"});
  const int protocol = GENERATE(2, 3);  // the same table under RESP2 and RESP3
  rockcache::testing::differential::Differ d(server.port(), reference.port(), protocol);
  const std::string f = "sort";
  // Distinct elements and numeric weights (ties broken by the element, as Redis): orders that
  // Redis leaves to its sort algorithm or its hash tables (ALPHA weights that tie, sets) are not
  // compared.
  for (int i = 0; i < 3000; i += 500) {
    std::vector<std::string> rpush = {"RPUSH", "l"}, zadd = {"ZADD", "z"}, mset = {"MSET"};
    for (int j = i; j < i + 500; ++j) {
      const std::string e = std::to_string((j * 7919) % 3000);
      rpush.push_back(e);
      zadd.push_back(std::to_string(j % 50));
      zadd.push_back(e);
      mset.push_back("w_" + e);
      mset.push_back(std::to_string((j * 13) % 40));
      d.Both(f, {"HSET", "h_" + e, "f", std::to_string(j % 30), "name", "n" + std::to_string(j)});
    }
    d.Both(f, rpush);
    d.Both(f, zadd);
    d.Both(f, mset);
  }
  const std::vector<std::vector<std::string>> commands = {
      {"SORT", "l"},
      {"SORT", "l", "DESC", "LIMIT", "10", "500"},
      {"SORT", "l", "ALPHA"},
      {"SORT", "l", "ALPHA", "DESC", "LIMIT", "2000", "50"},
      {"SORT", "l", "BY", "w_*", "GET", "#", "GET", "w_*", "GET", "h_*->name"},
      {"SORT", "l", "BY", "h_*->f", "DESC", "GET", "h_*->f", "GET", "nokey_*"},
      {"SORT_RO", "l", "BY", "w_*", "LIMIT", "100", "100"},
      {"SORT", "l", "BY", "nosort", "LIMIT", "5", "2000", "GET", "w_*"},
      {"SORT", "l", "BY", "nosort", "DESC", "GET", "#", "GET", "h_*->f"},
      {"SORT", "z", "BY", "nosort", "DESC", "LIMIT", "0", "1000"},
      {"SORT", "z", "BY", "w_*", "DESC"},
      {"SORT", "z", "BY", "h_*->name"},
  };
  for (const auto& cmd : commands) d.Both(f, cmd);
  const auto& stats = d.stats(f);
  CHECK(stats.nonempty_arrays >= 11);
  CHECK(stats.mismatches == 0);
}

TEST_CASE("a slow reader of a sliced SORT is closed at the output limit", "[sort][slicing]") {
  TestServer server({"--slice-items", "64"});
  Client c(server.port());
  for (int i = 0; i < 20000; i += 500) {
    std::vector<std::string> rpush = {"RPUSH", "big"};
    for (int j = i; j < i + 500; ++j) rpush.push_back(Name(j) + std::string(1000, 'x'));
    c.Command(rpush);
  }
  CHECK(c.Command({"SORT", "big", "ALPHA", "DESC"}).elements.size() == 20000);
  CHECK(Run(c, {"CONFIG", "SET", "client-output-buffer-limit", "normal 1mb 0 0"}) == "status:OK");
  // One that reads nothing is closed once pending passes 1 MB.
  const long long accepted = Stat(c, "total_connections_received");
  RawConnection slow(server.port());
  slow.Send(Resp({"SORT", "big", "ALPHA", "DESC", "GET", "#"}));
  bool closed = false;
  for (int i = 0; i < 1200 && !closed; ++i) {
    SleepMs(50);
    closed = Stat(c, "total_connections_received") > accepted &&
             InfoFields(InfoText(c, "clients"))["connected_clients"] == "1";
  }
  CHECK(closed);
  std::string received;
  CHECK(slow.WaitClosed(&received, 10000));
  CHECK(received.size() < 20 * 1000 * 1000);
  CHECK(Run(c, {"PING"}) == "status:PONG");
}

}  // namespace sliced_sort_test
