#include "config/buffer_limits.h"

#include <cctype>
#include <cstdlib>
#include <vector>

#include "config/config.h"

namespace rockcache::config {
namespace {

std::vector<std::string> Words(std::string_view text) {
  std::vector<std::string> words;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    size_t start = i;
    while (i < text.size() && !std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    if (i > start) words.emplace_back(text.substr(start, i - start));
  }
  return words;
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool ParseSeconds(const std::string& text, int64_t* out) {
  if (text.empty() || text.size() > 18) return false;
  for (char c : text) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  *out = std::strtoll(text.c_str(), nullptr, 10);
  return true;
}

void AppendClass(std::string* out, const char* name, const BufferLimit& limit) {
  if (!out->empty()) *out += ' ';
  *out += name;
  *out += ' ' + std::to_string(limit.hard) + ' ' + std::to_string(limit.soft) + ' ' +
          std::to_string(limit.soft_seconds);
}

}  // namespace

Status ParseClientBufferLimits(std::string_view text, const ClientBufferLimits& base,
                               ClientBufferLimits* out) {
  std::vector<std::string> words = Words(text);
  ClientBufferLimits limits = base;
  int64_t single = 0;
  if (words.size() == 1 && ParseMemory(words[0], &single) && single >= 0) {
    limits.normal.hard = single;  // rockcache's older one-size syntax
    *out = limits;
    return Status::OK();
  }
  if (words.empty() || words.size() % 4 != 0) {
    return Status::InvalidArgument("Wrong number of arguments in buffer limit configuration.");
  }
  for (size_t i = 0; i < words.size(); i += 4) {
    std::string name = Lower(words[i]);
    BufferLimit* target = nullptr;
    if (name == "normal") {
      target = &limits.normal;
    } else if (name == "replica" || name == "slave") {
      target = &limits.replica;
    } else if (name == "pubsub") {
      target = &limits.pubsub;
    } else {
      return Status::InvalidArgument(
          "Invalid client class specified in buffer limit configuration.");
    }
    BufferLimit limit;
    if (!ParseMemory(words[i + 1], &limit.hard) || !ParseMemory(words[i + 2], &limit.soft) ||
        !ParseSeconds(words[i + 3], &limit.soft_seconds) || limit.hard < 0 || limit.soft < 0) {
      return Status::InvalidArgument(
          "Error in hard, soft or soft_seconds setting in buffer limit configuration.");
    }
    *target = limit;
  }
  *out = limits;
  return Status::OK();
}

std::string FormatClientBufferLimits(const ClientBufferLimits& limits) {
  std::string out;
  AppendClass(&out, "normal", limits.normal);
  AppendClass(&out, "slave", limits.replica);
  AppendClass(&out, "pubsub", limits.pubsub);
  return out;
}

}  // namespace rockcache::config
