// Test fixtures for the Prometheus endpoint: a plain HTTP/1.0 GET over loopback and a strict
// parser of the Prometheus text format 0.0.4, which reports every way a text breaks it.
#pragma once

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace rockcache::testing {

struct HttpResponse {
  int status = 0;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
};

// GET `path` from 127.0.0.1:`port` (HTTP/1.0, read until the server closes). REQUIREs a
// response.
HttpResponse HttpGet(int port, const std::string& path);

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

// Parses `text` strictly (metric and label names, escapes, values, TYPE/HELP lines, histogram
// buckets adding up); every problem is one entry of errors.
Exposition ParsePrometheus(const std::string& text);

// The first 30 of `lines`, one an indented line, for a failure message.
std::string Join(const std::vector<std::string>& lines);

}  // namespace rockcache::testing
