// Observability from outside: INFO commandstats / errorstats / stats / pool / latencystats add up,
// SLOWLOG records slow commands with their stage breakdown, LATENCY HISTOGRAM has Redis 7's
// shape, and /metrics is valid Prometheus text format (checked by a strict parser below).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/integration/test_helpers.h"
#include "tests/integration/test_server.h"

using rockcache::testing::Client;
using rockcache::testing::Describe;
using rockcache::testing::FreePort;
using rockcache::testing::InfoFields;
using rockcache::testing::InfoText;
using rockcache::testing::NowMs;
using rockcache::testing::Reply;
using rockcache::testing::Run;
using rockcache::testing::SleepMs;
using rockcache::testing::TestServer;

namespace {

// ---- INFO helpers ----------------------------------------------------------------------------

std::map<std::string, std::string> Info(Client& c, const std::string& section) {
  return InfoFields(InfoText(c, section));
}

// "a=1,b=2" -> {a:1, b:2}.
std::map<std::string, std::string> SubFields(const std::string& value) {
  std::map<std::string, std::string> out;
  std::istringstream in(value);
  std::string item;
  while (std::getline(in, item, ',')) {
    size_t eq = item.find('=');
    if (eq != std::string::npos) out[item.substr(0, eq)] = item.substr(eq + 1);
  }
  return out;
}

uint64_t U(const std::string& s) {
  INFO("number '" << s << "'");
  REQUIRE(!s.empty());
  char* end = nullptr;
  unsigned long long v = std::strtoull(s.c_str(), &end, 10);
  REQUIRE(*end == '\0');
  return v;
}

double D(const std::string& s) {
  INFO("number '" << s << "'");
  REQUIRE(!s.empty());
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  REQUIRE(*end == '\0');
  return v;
}

// cmdstat_<cmd> as a map; empty when the command has no line.
std::map<std::string, std::string> CmdStat(Client& c, const std::string& cmd) {
  auto fields = Info(c, "commandstats");
  auto it = fields.find("cmdstat_" + cmd);
  if (it == fields.end()) return {};
  return SubFields(it->second);
}

// ---- a plain HTTP/1.0 client -------------------------------------------------------------------

struct HttpResponse {
  int status = 0;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
};

HttpResponse HttpGet(int port, const std::string& path) {
  HttpResponse response;
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  bool connected = false;
  for (int attempt = 0; attempt < 50 && !connected; ++attempt) {
    connected = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
    if (!connected) {
      close(fd);
      SleepMs(100);
      fd = socket(AF_INET, SOCK_STREAM, 0);
    }
  }
  REQUIRE(connected);
  std::string request = "GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
  REQUIRE(send(fd, request.data(), request.size(), MSG_NOSIGNAL) ==
          static_cast<ssize_t>(request.size()));
  std::string raw;
  char buf[65536];
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 1000) <= 0) continue;
    ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) break;
    raw.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  size_t header_end = raw.find("\r\n\r\n");
  INFO("raw response: " << raw.substr(0, 300));
  REQUIRE(header_end != std::string::npos);
  std::istringstream head(raw.substr(0, header_end));
  std::string line;
  std::getline(head, line);
  REQUIRE(line.rfind("HTTP/1.", 0) == 0);
  response.status = std::atoi(line.substr(9, 3).c_str());
  while (std::getline(head, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string name = line.substr(0, colon);
    for (char& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    std::string value = line.substr(colon + 1);
    while (!value.empty() && value[0] == ' ') value.erase(0, 1);
    response.headers[name] = value;
  }
  response.body = raw.substr(header_end + 4);
  if (response.headers.count("content-length")) {
    CHECK(response.body.size() == std::stoull(response.headers["content-length"]));
  }
  return response;
}

// ---- a strict Prometheus text-format (0.0.4) parser --------------------------------------------

struct Sample {
  std::string name;
  std::vector<std::pair<std::string, std::string>> labels;  // in order
  double value = 0;
  std::string family;
  std::string Label(const std::string& key) const {
    for (const auto& [k, v] : labels) {
      if (k == key) return v;
    }
    return "";
  }
  bool HasLabel(const std::string& key) const {
    for (const auto& [k, v] : labels) {
      if (k == key) return true;
    }
    return false;
  }
};

struct Exposition {
  std::vector<std::string> errors;
  std::vector<Sample> samples;
  std::map<std::string, std::string> types;  // family -> type
  // The value of the series `name` with exactly these labels (any order); NaN when absent.
  double Value(const std::string& name,
               std::vector<std::pair<std::string, std::string>> labels = {}) const {
    std::sort(labels.begin(), labels.end());
    for (const auto& s : samples) {
      auto l = s.labels;
      std::sort(l.begin(), l.end());
      if (s.name == name && l == labels) return s.value;
    }
    return std::nan("");
  }
};

bool IsMetricName(const std::string& s) {
  if (s.empty()) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    unsigned char ch = static_cast<unsigned char>(s[i]);
    bool ok = std::isalpha(ch) || ch == '_' || ch == ':' || (i > 0 && std::isdigit(ch));
    if (!ok) return false;
  }
  return true;
}

bool IsLabelName(const std::string& s) {
  if (s.empty()) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    unsigned char ch = static_cast<unsigned char>(s[i]);
    bool ok = std::isalpha(ch) || ch == '_' || (i > 0 && std::isdigit(ch));
    if (!ok) return false;
  }
  return true;
}

bool ParseValue(const std::string& s, double* out) {
  if (s == "+Inf" || s == "Inf") {
    *out = INFINITY;
    return true;
  }
  if (s == "-Inf") {
    *out = -INFINITY;
    return true;
  }
  if (s == "NaN") {
    *out = NAN;
    return true;
  }
  if (s.empty()) return false;
  // Go's ParseFloat: digits, sign, '.', exponent; no hex, no spaces, no "inf"/"nan" spellings.
  for (char ch : s) {
    if (!(std::isdigit(static_cast<unsigned char>(ch)) || ch == '.' || ch == 'e' || ch == 'E' ||
          ch == '+' || ch == '-')) {
      return false;
    }
  }
  char* end = nullptr;
  *out = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size();
}

Exposition ParsePrometheus(const std::string& text) {
  Exposition e;
  auto error = [&e](size_t line_no, const std::string& line, const std::string& why) {
    e.errors.push_back("line " + std::to_string(line_no) + ": " + why + ": '" +
                       line.substr(0, 160) + "'");
  };
  if (!text.empty() && text.back() != '\n') e.errors.push_back("does not end with a newline");
  std::set<std::string> help_seen;
  std::set<std::string> closed;  // families whose group has ended
  std::string current;           // the family of the current group
  std::set<std::string> series_seen;
  std::set<std::string> sampled;  // families that have samples

  auto enter = [&](const std::string& family, size_t line_no, const std::string& line) {
    if (family == current) return;
    if (closed.count(family)) error(line_no, line, "lines of family " + family + " not grouped");
    if (!current.empty()) closed.insert(current);
    current = family;
  };

  std::istringstream in(text);
  std::string line;
  size_t line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.find('\r') != std::string::npos) error(line_no, line, "carriage return");
    if (line.empty()) continue;
    if (line[0] == '#') {
      std::istringstream words(line);
      std::string hash, keyword, name;
      words >> hash >> keyword >> name;
      if (hash != "#" || (keyword != "HELP" && keyword != "TYPE")) continue;  // a comment
      if (!IsMetricName(name)) {
        error(line_no, line, "bad metric name in " + keyword);
        continue;
      }
      if (keyword == "TYPE") {
        std::string type, extra;
        words >> type;
        if (words >> extra) error(line_no, line, "junk after TYPE");
        static const std::set<std::string> kTypes = {"counter", "gauge", "histogram", "summary",
                                                     "untyped"};
        if (!kTypes.count(type)) error(line_no, line, "unknown type");
        if (e.types.count(name)) error(line_no, line, "second TYPE for " + name);
        if (sampled.count(name)) error(line_no, line, "TYPE after samples of " + name);
        e.types[name] = type;
      } else {
        if (help_seen.count(name)) error(line_no, line, "second HELP for " + name);
        help_seen.insert(name);
        // Only \\ and \n escapes are allowed in HELP text.
        std::string help = line.substr(std::min(line.size(), 7 + name.size() + 1));
        for (size_t i = 0; i < help.size(); ++i) {
          if (help[i] == '\\') {
            if (i + 1 >= help.size() || (help[i + 1] != '\\' && help[i + 1] != 'n')) {
              error(line_no, line, "bad escape in HELP");
            }
            ++i;
          }
        }
      }
      enter(name, line_no, line);
      continue;
    }
    // A sample: name [{labels}] value [timestamp]
    Sample s;
    size_t i = 0;
    while (i < line.size() && line[i] != '{' && line[i] != ' ') ++i;
    s.name = line.substr(0, i);
    if (!IsMetricName(s.name)) {
      error(line_no, line, "bad metric name");
      continue;
    }
    bool ok = true;
    std::set<std::string> label_names;
    if (i < line.size() && line[i] == '{') {
      ++i;
      while (ok) {
        if (i < line.size() && line[i] == '}') {
          ++i;
          break;
        }
        size_t start = i;
        while (i < line.size() && line[i] != '=' && line[i] != '}' && line[i] != ',') ++i;
        std::string lname = line.substr(start, i - start);
        if (!IsLabelName(lname) || i >= line.size() || line[i] != '=' || i + 1 >= line.size() ||
            line[i + 1] != '"') {
          error(line_no, line, "bad label");
          ok = false;
          break;
        }
        if (!label_names.insert(lname).second) error(line_no, line, "duplicate label " + lname);
        i += 2;
        std::string lvalue;
        bool closed_quote = false;
        while (i < line.size()) {
          char ch = line[i];
          if (ch == '\\') {
            if (i + 1 >= line.size()) break;
            char next = line[i + 1];
            if (next == '\\') {
              lvalue += '\\';
            } else if (next == '"') {
              lvalue += '"';
            } else if (next == 'n') {
              lvalue += '\n';
            } else {
              error(line_no, line, "bad escape in label value");
              ok = false;
            }
            i += 2;
            continue;
          }
          if (ch == '"') {
            closed_quote = true;
            ++i;
            break;
          }
          lvalue += ch;
          ++i;
        }
        if (!closed_quote) {
          error(line_no, line, "unterminated label value");
          ok = false;
          break;
        }
        s.labels.emplace_back(lname, lvalue);
        if (i < line.size() && line[i] == ',') {
          ++i;
        } else if (!(i < line.size() && line[i] == '}')) {
          error(line_no, line, "expected , or } after a label");
          ok = false;
        }
      }
    }
    if (!ok) continue;
    if (i >= line.size() || line[i] != ' ') {
      error(line_no, line, "expected a space before the value");
      continue;
    }
    std::istringstream rest(line.substr(i + 1));
    std::string value_text, timestamp, extra;
    rest >> value_text;
    if (line.substr(i + 1).rfind(" ", 0) == 0) error(line_no, line, "more than one space");
    if (!ParseValue(value_text, &s.value)) error(line_no, line, "bad value");
    if (rest >> timestamp) {
      char* end = nullptr;
      std::strtoll(timestamp.c_str(), &end, 10);
      if (*end != '\0') error(line_no, line, "bad timestamp");
    }
    if (rest >> extra) error(line_no, line, "junk after the value");

    // The family: the name itself, or a histogram's/summary's _bucket/_sum/_count.
    std::string family;
    if (e.types.count(s.name) && e.types[s.name] != "histogram") {
      family = s.name;
    } else {
      for (const char* suffix : {"_bucket", "_sum", "_count"}) {
        std::string sfx = suffix;
        if (s.name.size() > sfx.size() &&
            s.name.compare(s.name.size() - sfx.size(), sfx.size(), sfx) == 0) {
          std::string base = s.name.substr(0, s.name.size() - sfx.size());
          auto it = e.types.find(base);
          if (it != e.types.end() &&
              (it->second == "histogram" || (it->second == "summary" && sfx != "_bucket"))) {
            family = base;
          }
        }
      }
    }
    if (family.empty()) {
      error(line_no, line, "sample without a TYPE line before it");
      family = s.name;
    }
    s.family = family;
    if (e.types[family] == "histogram" && s.name == family) {
      error(line_no, line, "histogram sample without _bucket/_sum/_count");
    }
    if (s.name == family + "_bucket" && !s.HasLabel("le"))
      error(line_no, line, "bucket without le");
    if (e.types[family] == "counter" && !(s.value >= 0)) error(line_no, line, "negative counter");
    enter(family, line_no, line);
    sampled.insert(family);
    auto sorted = s.labels;
    std::sort(sorted.begin(), sorted.end());
    std::string id = s.name;
    for (const auto& [k, v] : sorted) id += "|" + k + "=" + v;
    if (!series_seen.insert(id).second) error(line_no, line, "duplicate series");
    e.samples.push_back(std::move(s));
  }

  // Histograms: per label set (without le), buckets with increasing le and non-decreasing
  // counts, ending in +Inf == _count, and a _sum.
  struct Series {
    std::vector<std::pair<double, double>> buckets;  // le, count, in order of appearance
    bool has_sum = false, has_count = false;
    double count = 0;
  };
  std::map<std::string, Series> histograms;
  for (const auto& s : e.samples) {
    auto it = e.types.find(s.family);
    if (it == e.types.end() || it->second != "histogram") continue;
    auto labels = s.labels;
    labels.erase(
        std::remove_if(labels.begin(), labels.end(), [](const auto& l) { return l.first == "le"; }),
        labels.end());
    std::sort(labels.begin(), labels.end());
    std::string id = s.family + "{";
    for (const auto& [k, v] : labels) id += k + "=" + v + ",";
    id += "}";
    Series& series = histograms[id];
    if (s.name == s.family + "_bucket") {
      double le = 0;
      if (!ParseValue(s.Label("le"), &le)) {
        e.errors.push_back(id + ": bad le '" + s.Label("le") + "'");
        continue;
      }
      series.buckets.emplace_back(le, s.value);
    } else if (s.name == s.family + "_sum") {
      series.has_sum = true;
    } else if (s.name == s.family + "_count") {
      series.has_count = true;
      series.count = s.value;
    }
  }
  for (const auto& [id, series] : histograms) {
    if (series.buckets.empty()) e.errors.push_back(id + ": no buckets");
    if (!series.has_sum) e.errors.push_back(id + ": no _sum");
    if (!series.has_count) e.errors.push_back(id + ": no _count");
    for (size_t i = 1; i < series.buckets.size(); ++i) {
      if (!(series.buckets[i].first > series.buckets[i - 1].first)) {
        e.errors.push_back(id + ": le not increasing");
      }
      if (series.buckets[i].second < series.buckets[i - 1].second) {
        e.errors.push_back(id + ": bucket counts decrease");
      }
    }
    if (!series.buckets.empty()) {
      if (!std::isinf(series.buckets.back().first)) e.errors.push_back(id + ": no +Inf bucket");
      if (series.has_count && series.buckets.back().second != series.count) {
        e.errors.push_back(id + ": +Inf bucket != _count");
      }
    }
  }
  return e;
}

std::string Join(const std::vector<std::string>& lines) {
  std::string out;
  for (size_t i = 0; i < lines.size() && i < 30; ++i) out += "\n  " + lines[i];
  if (lines.size() > 30) out += "\n  ... " + std::to_string(lines.size() - 30) + " more";
  return out;
}

}  // namespace

TEST_CASE("INFO commandstats, errorstats and stats add up", "[metrics]") {
  TestServer server;
  Client c(server.port()), admin(server.port());
  REQUIRE(Run(admin, {"CONFIG", "RESETSTAT"}) == "status:OK");
  uint64_t processed_before = U(Info(admin, "stats")["total_commands_processed"]);

  const int kSets = 37, kHits = 15, kMisses = 8;
  for (int i = 0; i < kSets; ++i) {
    REQUIRE(Run(c, {"SET", "k" + std::to_string(i % 20), "v"}) == "status:OK");
  }
  for (int i = 0; i < kHits; ++i) CHECK(Run(c, {"GET", "k" + std::to_string(i)}) == "bulk:v");
  for (int i = 0; i < kMisses; ++i) CHECK(Run(c, {"GET", "none" + std::to_string(i)}) == "nil");
  // One failed call (runs, replies an error), one rejected call (arity), one WRONGTYPE.
  CHECK(Run(c, {"INCR", "k0"}) == "err:ERR value is not an integer or out of range");
  CHECK(Run(c, {"GET"}) == "err:ERR wrong number of arguments for 'get' command");
  CHECK(Run(c, {"HGET", "k1", "f"}).rfind("err:WRONGTYPE", 0) == 0);
  const int kSent = kSets + kHits + kMisses + 3;

  auto set = CmdStat(admin, "set");
  auto get = CmdStat(admin, "get");
  auto incr = CmdStat(admin, "incr");
  auto hget = CmdStat(admin, "hget");
  REQUIRE(!set.empty());
  REQUIRE(!get.empty());
  REQUIRE(!incr.empty());
  REQUIRE(!hget.empty());
  CHECK(U(set["calls"]) == kSets);
  CHECK(U(set["failed_calls"]) == 0);
  CHECK(U(set["rejected_calls"]) == 0);
  CHECK(U(set["rtc_calls"]) == 0);
  CHECK(U(get["calls"]) == kHits + kMisses);
  CHECK(U(get["rejected_calls"]) == 1);
  CHECK(U(get["failed_calls"]) == 0);
  // The SETs were written through; the misses are filled from RocksDB's memory in the network
  // thread (rtc-storage-read-max-bytes), so every GET is answered there.
  CHECK(U(get["rtc_calls"]) == kHits + kMisses);
  CHECK(U(incr["calls"]) == 1);
  CHECK(U(incr["failed_calls"]) == 1);
  CHECK(U(hget["calls"]) == 1);
  CHECK(U(hget["failed_calls"]) == 1);
  for (auto* stat : {&set, &get}) {
    uint64_t calls = U((*stat)["calls"]), usec = U((*stat)["usec"]);
    double per_call = D((*stat)["usec_per_call"]);
    CHECK(std::abs(per_call - static_cast<double>(usec) / static_cast<double>(calls)) < 1.0);
  }

  auto errors = Info(admin, "errorstats");
  CHECK(errors["errorstat_ERR"] == "count=2");
  CHECK(errors["errorstat_WRONGTYPE"] == "count=1");
  CHECK(errors.size() == 2);

  auto stats = Info(admin, "stats");
  CHECK(U(stats["keyspace_hits"]) == kHits);
  CHECK(U(stats["keyspace_misses"]) == kMisses);
  CHECK(U(stats["keyspace_hits"]) + U(stats["keyspace_misses"]) == kHits + kMisses);
  CHECK(U(stats["total_error_replies"]) == 3);
  uint64_t processed = U(stats["total_commands_processed"]);
  CHECK(processed >= processed_before + kSent);
  CHECK(processed <= processed_before + kSent + 10);  // plus the INFO calls above

  // CONFIG RESETSTAT zeroes all of it.
  REQUIRE(Run(admin, {"CONFIG", "RESETSTAT"}) == "status:OK");
  auto after = Info(admin, "commandstats");
  CHECK(after.count("cmdstat_set") == 0);
  CHECK(after.count("cmdstat_get") == 0);
  CHECK(after.count("cmdstat_incr") == 0);
  CHECK(Info(admin, "errorstats").empty());
  stats = Info(admin, "stats");
  CHECK(U(stats["keyspace_hits"]) == 0);
  CHECK(U(stats["keyspace_misses"]) == 0);
  CHECK(U(stats["total_error_replies"]) == 0);
  // As in Redis, CONFIG RESETSTAT counts itself (after the reset), then the three INFOs.
  CHECK(U(stats["total_commands_processed"]) <= 4);
  CHECK(Info(admin, "latencystats").count("latency_percentiles_usec_get") == 0);
  // And counting starts again from zero.
  CHECK(Run(c, {"GET", "k1"}) == "bulk:v");
  CHECK(U(CmdStat(admin, "get")["calls"]) == 1);
}

TEST_CASE("INFO pool stage lines add up", "[metrics]") {
  TestServer server;
  Client c(server.port()), admin(server.port());
  REQUIRE(Run(admin, {"CONFIG", "RESETSTAT"}) == "status:OK");
  const int n = 2000;
  for (int i = 0; i < n; ++i) c.Append({"SET", "s" + std::to_string(i % 100), std::to_string(i)});
  for (int i = 0; i < n; ++i) {
    Reply r;
    REQUIRE(c.GetReply(&r));
    REQUIRE(Describe(r) == "status:OK");
  }
  for (int i = 0; i < 200; ++i) REQUIRE(Run(c, {"SET", "one", "v"}) == "status:OK");

  auto pool = Info(admin, "pool");
  std::map<std::string, std::map<std::string, std::string>> stages;
  for (const char* stage : {"before_queue", "queue_wait", "execute", "hand_back", "total"}) {
    std::string key = std::string("stage_") + stage + "_usec";
    INFO("field " << key);
    REQUIRE(pool.count(key) == 1);
    stages[stage] = SubFields(pool[key]);
    for (const char* part : {"p50", "p99", "p99.9", "count", "sum"}) {
      INFO("part " << part);
      REQUIRE(stages[stage].count(part) == 1);
    }
  }
  uint64_t total_count = U(stages["total"]["count"]);
  CHECK(total_count >= n + 200);
  double total_p999 = D(stages["total"]["p99.9"]);
  double stage_sum = 0;
  for (const char* stage : {"before_queue", "queue_wait", "execute", "hand_back"}) {
    INFO("stage " << stage);
    auto& s = stages[stage];
    CHECK(U(s["count"]) > 0);
    CHECK(U(s["count"]) <= total_count);
    CHECK(D(s["p50"]) <= D(s["p99"]));
    CHECK(D(s["p99"]) <= D(s["p99.9"]));
    CHECK(D(s["p50"]) <= total_p999);
    stage_sum += D(s["sum"]);
  }
  // SETs all went through the pool: every stage saw each of them.
  CHECK(U(stages["before_queue"]["count"]) >= n + 200);
  CHECK(U(stages["hand_back"]["count"]) >= n + 200);
  CHECK(D(stages["total"]["p50"]) <= D(stages["total"]["p99"]));
  CHECK(D(stages["total"]["p99"]) <= total_p999);
  CHECK(D(stages["total"]["sum"]) > 0);
  CHECK(stage_sum <= D(stages["total"]["sum"]) * 1.01 + 1.0);
  CHECK(D(stages["execute"]["sum"]) > 0);
  CHECK(U(pool["pool_tasks_run"]) > 0);
  CHECK(U(pool["pool_wakeups_spin"]) + U(pool["pool_wakeups_yield"]) +
            U(pool["pool_wakeups_block"]) >
        0);
}

TEST_CASE("INFO latencystats has ordered percentiles", "[metrics]") {
  TestServer server;
  Client c(server.port()), admin(server.port());
  REQUIRE(Run(c, {"SET", "k", "v"}) == "status:OK");
  for (int i = 0; i < 300; ++i) REQUIRE(Run(c, {"GET", i % 3 ? "k" : "nokey"}) != "");
  auto lat = Info(admin, "latencystats");
  REQUIRE(lat.count("latency_percentiles_usec_get") == 1);
  REQUIRE(lat.count("latency_percentiles_usec_set") == 1);
  for (const char* cmd : {"get", "set"}) {
    auto p = SubFields(lat[std::string("latency_percentiles_usec_") + cmd]);
    INFO("command " << cmd << ": " << lat[std::string("latency_percentiles_usec_") + cmd]);
    REQUIRE(p.size() == 3);
    double p50 = D(p["p50"]), p99 = D(p["p99"]), p999 = D(p["p99.9"]);
    CHECK(p50 > 0);
    CHECK(p50 <= p99);
    CHECK(p99 <= p999);
    CHECK(p999 < 10e6);
  }
  CHECK(lat.count("latency_percentiles_usec_hgetall") == 0);
}

namespace {

struct SlowEntry {
  int64_t id = 0, time = 0, duration = 0;
  std::vector<std::string> args;
  std::string addr, name;
  std::vector<std::pair<std::string, int64_t>> stages;
  std::vector<std::pair<std::string, int64_t>> pool;  // level, slices, slices_queue_wait
};

std::vector<SlowEntry> SlowlogGet(Client& c, const std::string& count = "-1") {
  Reply r = c.Command({"SLOWLOG", "GET", count});
  REQUIRE(r.type == REDIS_REPLY_ARRAY);
  std::vector<SlowEntry> entries;
  for (const auto& e : r.elements) {
    INFO("entry " << Describe(e));
    REQUIRE(e.type == REDIS_REPLY_ARRAY);
    REQUIRE(e.elements.size() == 8);
    REQUIRE(e.elements[0].type == REDIS_REPLY_INTEGER);
    REQUIRE(e.elements[1].type == REDIS_REPLY_INTEGER);
    REQUIRE(e.elements[2].type == REDIS_REPLY_INTEGER);
    REQUIRE(e.elements[3].type == REDIS_REPLY_ARRAY);
    REQUIRE(e.elements[4].type == REDIS_REPLY_STRING);
    REQUIRE(e.elements[5].type == REDIS_REPLY_STRING);
    REQUIRE(e.elements[6].type == REDIS_REPLY_ARRAY);
    SlowEntry s;
    s.id = e.elements[0].integer;
    s.time = e.elements[1].integer;
    s.duration = e.elements[2].integer;
    for (const auto& a : e.elements[3].elements) {
      REQUIRE(a.type == REDIS_REPLY_STRING);
      s.args.push_back(a.str);
    }
    s.addr = e.elements[4].str;
    s.name = e.elements[5].str;
    const auto& st = e.elements[6].elements;
    REQUIRE(st.size() % 2 == 0);
    for (size_t i = 0; i < st.size(); i += 2) {
      REQUIRE(st[i].type == REDIS_REPLY_STRING);
      REQUIRE(st[i + 1].type == REDIS_REPLY_INTEGER);
      s.stages.emplace_back(st[i].str, st[i + 1].integer);
    }
    REQUIRE(e.elements[7].type == REDIS_REPLY_ARRAY);
    const auto& pv = e.elements[7].elements;
    REQUIRE(pv.size() == 6);
    for (size_t i = 0; i < pv.size(); i += 2) {
      REQUIRE(pv[i].type == REDIS_REPLY_STRING);
      REQUIRE(pv[i + 1].type == REDIS_REPLY_INTEGER);
      s.pool.emplace_back(pv[i].str, pv[i + 1].integer);
    }
    entries.push_back(std::move(s));
  }
  return entries;
}

int64_t Stage(const SlowEntry& e, const std::string& name) {
  for (const auto& [n, v] : e.stages) {
    if (n == name) return v;
  }
  return -1;
}

}  // namespace

TEST_CASE("SLOWLOG records slow commands with their stages", "[metrics]") {
  TestServer server;
  Client c(server.port()), admin(server.port());
  REQUIRE(Run(admin, {"CONFIG", "SET", "slowlog-log-slower-than", "20000"}) == "status:OK");
  REQUIRE(Run(admin, {"SLOWLOG", "RESET"}) == "status:OK");
  REQUIRE(Run(c, {"CLIENT", "SETNAME", "sleeper"}) == "status:OK");

  int64_t before_s = NowMs() / 1000;
  REQUIRE(Run(c, {"debug", "sleep", "0.05"}) == "status:OK");
  CHECK(Run(admin, {"SLOWLOG", "LEN"}) == "int:1");
  auto entries = SlowlogGet(admin);
  REQUIRE(entries.size() == 1);
  const SlowEntry& e = entries[0];
  CHECK(e.args == std::vector<std::string>{"debug", "sleep", "0.05"});
  CHECK(e.duration >= 50000);
  CHECK(e.duration < 5000000);
  CHECK(e.time >= before_s - 1);
  CHECK(e.time <= NowMs() / 1000 + 1);
  CHECK(e.addr.rfind("127.0.0.1:", 0) == 0);
  CHECK(e.name == "sleeper");
  std::vector<std::string> names;
  for (const auto& [n, v] : e.stages) names.push_back(n);
  CHECK(names ==
        std::vector<std::string>{"before_queue", "queue_wait", "execute", "hand_back", "total"});
  CHECK(Stage(e, "execute") >= 50000);
  CHECK(Stage(e, "total") == e.duration);
  int64_t parts = Stage(e, "before_queue") + Stage(e, "queue_wait") + Stage(e, "execute") +
                  Stage(e, "hand_back");
  CHECK(parts <= Stage(e, "total"));
  for (const auto& [n, v] : e.stages) CHECK(v >= 0);
  // The pool's view: one slice (nothing is resumable yet), its queue wait is the stage's.
  REQUIRE(e.pool.size() == 3);
  CHECK(e.pool[0] == std::make_pair(std::string("level"), int64_t{0}));
  CHECK(e.pool[1] == std::make_pair(std::string("slices"), int64_t{1}));
  CHECK(e.pool[2].first == "slices_queue_wait");
  CHECK(e.pool[2].second == Stage(e, "queue_wait"));

  // Arguments are kept as sent, not lower-cased; ids grow; newest first.
  REQUIRE(Run(c, {"DEBUG", "SLEEP", "0.03"}) == "status:OK");
  entries = SlowlogGet(admin);
  REQUIRE(entries.size() == 2);
  CHECK(entries[0].args == std::vector<std::string>{"DEBUG", "SLEEP", "0.03"});
  CHECK(entries[0].id > entries[1].id);
  CHECK(entries[0].duration >= 30000);
  CHECK(SlowlogGet(admin, "1").size() == 1);

  REQUIRE(Run(admin, {"SLOWLOG", "RESET"}) == "status:OK");
  CHECK(Run(admin, {"SLOWLOG", "LEN"}) == "int:0");
  CHECK(SlowlogGet(admin).empty());

  // Commands under the threshold are not logged (1 s, so a loaded machine's slow SET is not
  // mistaken for a logging bug).
  REQUIRE(Run(admin, {"CONFIG", "SET", "slowlog-log-slower-than", "1000000"}) == "status:OK");
  for (int i = 0; i < 200; ++i) {
    REQUIRE(Run(c, {"SET", "k", std::to_string(i)}) == "status:OK");
    REQUIRE(Run(c, {"GET", "k"}) == "bulk:" + std::to_string(i));
  }
  CHECK(Run(admin, {"SLOWLOG", "LEN"}) == "int:0");

  // A negative threshold logs nothing.
  REQUIRE(Run(admin, {"CONFIG", "SET", "slowlog-log-slower-than", "-1"}) == "status:OK");
  REQUIRE(Run(c, {"DEBUG", "SLEEP", "0.03"}) == "status:OK");
  CHECK(Run(admin, {"SLOWLOG", "LEN"}) == "int:0");

  // slowlog-max-len bounds the log; 0 logs everything; in-loop commands have two stages.
  REQUIRE(Run(admin, {"CONFIG", "SET", "slowlog-max-len", "5"}) == "status:OK");
  REQUIRE(Run(admin, {"CONFIG", "SET", "slowlog-log-slower-than", "0"}) == "status:OK");
  for (int i = 0; i < 20; ++i) REQUIRE(Run(c, {"PING", "p" + std::to_string(i)}) != "");
  CHECK(Run(admin, {"SLOWLOG", "LEN"}) == "int:5");
  entries = SlowlogGet(admin);
  REQUIRE(entries.size() == 5);
  for (size_t i = 1; i < entries.size(); ++i) CHECK(entries[i - 1].id > entries[i].id);
  bool saw_ping = false;
  for (const auto& entry : entries) {
    if (!entry.args.empty() && entry.args[0] == "PING") {
      saw_ping = true;
      std::vector<std::string> stage_names;
      for (const auto& [n, v] : entry.stages) stage_names.push_back(n);
      CHECK(stage_names == std::vector<std::string>{"execute", "total"});
      CHECK(Stage(entry, "execute") <= Stage(entry, "total"));
    }
  }
  CHECK(saw_ping);
  REQUIRE(Run(admin, {"CONFIG", "SET", "slowlog-max-len", "2"}) == "status:OK");
  CHECK(Run(admin, {"SLOWLOG", "LEN"}) == "int:2");
}

TEST_CASE("LATENCY HISTOGRAM has Redis 7's shape", "[metrics]") {
  TestServer server;
  Client c(server.port()), admin(server.port());
  REQUIRE(Run(admin, {"CONFIG", "RESETSTAT"}) == "status:OK");
  REQUIRE(Run(c, {"SET", "k", "v"}) == "status:OK");
  const int n = 50;
  for (int i = 0; i < n; ++i) REQUIRE(Run(c, {"GET", i % 2 ? "k" : "nokey"}) != "");

  Reply r = admin.Command({"LATENCY", "HISTOGRAM", "get"});
  INFO(Describe(r));
  REQUIRE(r.type == REDIS_REPLY_ARRAY);
  REQUIRE(r.elements.size() == 2);
  CHECK(Describe(r.elements[0]) == "bulk:get");
  const Reply& body = r.elements[1];
  REQUIRE(body.type == REDIS_REPLY_ARRAY);
  REQUIRE(body.elements.size() == 4);
  CHECK(Describe(body.elements[0]) == "bulk:calls");
  CHECK(Describe(body.elements[1]) == "int:" + std::to_string(n));
  CHECK(Describe(body.elements[2]) == "bulk:histogram_usec");
  const Reply& hist = body.elements[3];
  REQUIRE(hist.type == REDIS_REPLY_ARRAY);
  REQUIRE(!hist.elements.empty());
  REQUIRE(hist.elements.size() % 2 == 0);
  long long last_bucket = 0, last_count = 0;
  for (size_t i = 0; i < hist.elements.size(); i += 2) {
    REQUIRE(hist.elements[i].type == REDIS_REPLY_INTEGER);
    REQUIRE(hist.elements[i + 1].type == REDIS_REPLY_INTEGER);
    long long bucket = hist.elements[i].integer, count = hist.elements[i + 1].integer;
    CHECK(bucket > last_bucket);
    CHECK((bucket & (bucket - 1)) == 0);  // a power of two
    CHECK(count >= last_count);
    CHECK(count > 0);
    last_bucket = bucket;
    last_count = count;
  }
  CHECK(last_count == n);

  // Several commands, case-insensitive names, unknown names ignored.
  r = admin.Command({"LATENCY", "HISTOGRAM", "SET", "get", "nosuchcommand"});
  REQUIRE(r.type == REDIS_REPLY_ARRAY);
  REQUIRE(r.elements.size() == 4);
  std::set<std::string> names = {r.elements[0].str, r.elements[2].str};
  CHECK(names == std::set<std::string>{"get", "set"});
  r = admin.Command({"LATENCY", "HISTOGRAM", "hgetall"});
  CHECK(Describe(r) == "[]");
  // Without arguments: every command with calls, get among them.
  r = admin.Command({"LATENCY", "HISTOGRAM"});
  REQUIRE(r.type == REDIS_REPLY_ARRAY);
  bool has_get = false;
  for (size_t i = 0; i < r.elements.size(); i += 2) has_get |= r.elements[i].str == "get";
  CHECK(has_get);
}

TEST_CASE("the strict Prometheus parser rejects malformed text", "[metrics]") {
  // Sanity of the checker itself, so that an empty error list below means something.
  CHECK(ParsePrometheus("# TYPE a counter\na 1\n").errors.empty());
  CHECK(ParsePrometheus("# TYPE a counter\na{x=\"q\\\"\\\\\\n\"} 1\n").errors.empty());
  CHECK(ParsePrometheus("# TYPE a gauge\na +Inf\n# TYPE b gauge\nb NaN\n").errors.empty());
  CHECK(!ParsePrometheus("a 1\n").errors.empty());                               // no TYPE
  CHECK(!ParsePrometheus("# TYPE a counter\na 1").errors.empty());               // no final newline
  CHECK(!ParsePrometheus("# TYPE 1a counter\n1a 1\n").errors.empty());           // bad name
  CHECK(!ParsePrometheus("# TYPE a counter\na{1x=\"v\"} 1\n").errors.empty());   // bad label
  CHECK(!ParsePrometheus("# TYPE a counter\na{x=v} 1\n").errors.empty());        // unquoted
  CHECK(!ParsePrometheus("# TYPE a counter\na{x=\"\\t\"} 1\n").errors.empty());  // bad escape
  CHECK(!ParsePrometheus("# TYPE a counter\na one\n").errors.empty());           // bad value
  CHECK(!ParsePrometheus("# TYPE a counter\na -1\n").errors.empty());            // negative counter
  CHECK(!ParsePrometheus("# TYPE a counter\na 1\na 2\n").errors.empty());        // duplicate
  CHECK(!ParsePrometheus("# TYPE a wibble\na 1\n").errors.empty());              // unknown type
  CHECK(!ParsePrometheus("# TYPE a counter\n# TYPE b counter\na 1\nb 1\n").errors.empty());
  CHECK(!ParsePrometheus("# TYPE a counter\na{x=\"1\"} 1\n# TYPE b counter\nb 1\n"
                         "a{x=\"2\"} 1\n")
             .errors.empty());  // not grouped
  const std::string h = "# TYPE h histogram\n";
  CHECK(ParsePrometheus(h + "h_bucket{le=\"1\"} 1\nh_bucket{le=\"+Inf\"} 2\nh_sum 3\nh_count 2\n")
            .errors.empty());
  CHECK(!ParsePrometheus(h + "h_bucket{le=\"1\"} 3\nh_bucket{le=\"+Inf\"} 2\nh_sum 3\n"
                             "h_count 2\n")
             .errors.empty());  // decreasing
  CHECK(!ParsePrometheus(h + "h_bucket{le=\"1\"} 1\nh_sum 3\nh_count 1\n").errors.empty());
  CHECK(!ParsePrometheus(h + "h_bucket{le=\"+Inf\"} 2\nh_sum 3\nh_count 3\n").errors.empty());
  CHECK(!ParsePrometheus(h + "h_bucket{le=\"+Inf\"} 2\nh_count 2\n").errors.empty());  // no sum
  CHECK(!ParsePrometheus(h + "h 1\n").errors.empty());
}

TEST_CASE("/metrics is valid Prometheus text and has the key series", "[metrics]") {
  const int metrics_port = FreePort();
  TestServer server({"--metrics-port", std::to_string(metrics_port)});
  Client c(server.port()), admin(server.port());
  const int kSets = 300, kGets = 200;
  for (int i = 0; i < kSets; ++i) {
    REQUIRE(Run(c, {"SET", "k" + std::to_string(i % 50), "v"}) == "status:OK");
  }
  for (int i = 0; i < kGets; ++i) REQUIRE(Run(c, {"GET", "k" + std::to_string(i % 60)}) != "");
  CHECK(Run(c, {"INCR", "k1"}).rfind("err:", 0) == 0);  // a failed call
  CHECK(Run(c, {"GET"}).rfind("err:", 0) == 0);         // a rejected call
  REQUIRE(Run(c, {"HSET", "h", "f", "v"}) == "int:1");
  REQUIRE(Run(c, {"HGET", "h", "f"}) == "bulk:v");

  HttpResponse response = HttpGet(metrics_port, "/metrics");
  REQUIRE(response.status == 200);
  CHECK(response.headers["content-type"].rfind("text/plain; version=0.0.4", 0) == 0);
  Exposition e = ParsePrometheus(response.body);
  INFO("first lines:\n" << response.body.substr(0, 600));
  {
    INFO("Prometheus format errors:" << Join(e.errors));
    CHECK(e.errors.empty());
  }
  CHECK(e.samples.size() > 50);

  CHECK(e.Value("rockcache_command_calls_total", {{"cmd", "set"}}) == kSets);
  CHECK(e.Value("rockcache_command_calls_total", {{"cmd", "get"}}) == kGets);
  CHECK(e.types["rockcache_command_calls_total"] == "counter");
  CHECK(e.Value("rockcache_command_duration_seconds_bucket",
                {{"cmd", "set"}, {"stage", "total"}, {"le", "+Inf"}}) == kSets);
  CHECK(e.Value("rockcache_command_duration_seconds_count", {{"cmd", "set"}, {"stage", "total"}}) ==
        kSets);
  CHECK(e.Value("rockcache_command_duration_seconds_sum", {{"cmd", "set"}, {"stage", "total"}}) >
        0);
  CHECK(e.types["rockcache_command_duration_seconds"] == "histogram");
  CHECK(e.Value("rockcache_command_failed_calls_total", {{"cmd", "incr"}}) == 1);
  CHECK(e.Value("rockcache_command_rejected_calls_total", {{"cmd", "get"}}) == 1);
  CHECK(e.Value("rockcache_cache_hits_total") > 0);
  CHECK(e.types["rockcache_cache_hits_total"] == "counter");
  CHECK(e.Value("rockcache_rtc_answers_total") > 0);
  CHECK(!std::isnan(e.Value("rockcache_pool_wakeups_total", {{"phase", "block"}})));
  CHECK(e.Value("rockcache_pool_wakeups_total", {{"phase", "spin"}}) +
            e.Value("rockcache_pool_wakeups_total", {{"phase", "yield"}}) +
            e.Value("rockcache_pool_wakeups_total", {{"phase", "block"}}) >
        0);
  CHECK(e.Value("rockcache_stage_duration_seconds_bucket", {{"stage", "total"}, {"le", "+Inf"}}) >=
        kSets + kGets);
  CHECK(e.Value("rockcache_connected_clients") >= 2);
  // The same numbers as INFO.
  auto cache = Info(admin, "cache");
  CHECK(e.Value("rockcache_cache_maxmemory_bytes") == D(cache["cache_maxmemory"]));

  HttpResponse missing = HttpGet(metrics_port, "/nope");
  CHECK(missing.status == 404);
  HttpResponse with_query = HttpGet(metrics_port, "/metrics?x=1");
  CHECK(with_query.status == 200);
}
