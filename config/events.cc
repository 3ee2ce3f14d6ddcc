#include "config/events.h"

#include <algorithm>

namespace rockcache::config {

bool CanonicalEvents(std::string_view text, std::string* out) {
  static constexpr std::string_view kClasses = "g$lshzxetd";  // what 'A' stands for
  bool has[128] = {};
  for (char c : text) {
    if (c == 'A') {
      for (char k : kClasses) has[static_cast<unsigned char>(k)] = true;
    } else if (kClasses.find(c) != std::string_view::npos || c == 'K' || c == 'E' || c == 'm' ||
               c == 'n') {
      has[static_cast<unsigned char>(c)] = true;
    } else {
      return false;
    }
  }
  bool all = std::all_of(kClasses.begin(), kClasses.end(),
                         [&](char k) { return has[static_cast<unsigned char>(k)]; });
  out->clear();
  if (all) {
    *out = "A";
    if (has[static_cast<unsigned char>('n')]) out->push_back('n');
  } else {
    for (char k : std::string_view("g$lshzxetdn")) {
      if (has[static_cast<unsigned char>(k)]) out->push_back(k);
    }
  }
  for (char k : std::string_view("KEm")) {
    if (has[static_cast<unsigned char>(k)]) out->push_back(k);
  }
  return true;
}

std::string DisplayEvents(std::string_view canonical) {
  std::string shown(canonical);
  if (shown.rfind("An", 0) == 0) shown.erase(1, 1);
  return shown;
}

}  // namespace rockcache::config
