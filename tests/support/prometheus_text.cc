#include "tests/support/prometheus_text.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <set>
#include <sstream>

#include "tests/support/test_helpers.h"

namespace rockcache::testing {

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

namespace {

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

}  // namespace

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

}  // namespace rockcache::testing
