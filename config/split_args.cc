#include "config/split_args.h"

#include <cctype>

namespace rockcache {
namespace {

bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::optional<std::vector<std::string>> SplitArgs(std::string_view line) {
  std::vector<std::string> args;
  size_t p = 0;
  const size_t n = line.size();
  while (true) {
    while (p < n && IsSpace(line[p])) ++p;
    if (p >= n) return args;
    std::string current;
    bool in_double = false;
    bool in_single = false;
    bool done = false;
    while (!done) {
      if (in_double) {
        if (p >= n) return std::nullopt;
        if (line[p] == '\\' && p + 3 < n && line[p + 1] == 'x' && HexValue(line[p + 2]) >= 0 &&
            HexValue(line[p + 3]) >= 0) {
          current.push_back(static_cast<char>(HexValue(line[p + 2]) * 16 + HexValue(line[p + 3])));
          p += 3;
        } else if (line[p] == '\\' && p + 1 < n) {
          ++p;
          switch (line[p]) {
            case 'n':
              current.push_back('\n');
              break;
            case 'r':
              current.push_back('\r');
              break;
            case 't':
              current.push_back('\t');
              break;
            case 'b':
              current.push_back('\b');
              break;
            case 'a':
              current.push_back('\a');
              break;
            default:
              current.push_back(line[p]);
              break;
          }
        } else if (line[p] == '"') {
          if (p + 1 < n && !IsSpace(line[p + 1])) return std::nullopt;
          done = true;
        } else {
          current.push_back(line[p]);
        }
      } else if (in_single) {
        if (p >= n) return std::nullopt;
        if (line[p] == '\\' && p + 1 < n && line[p + 1] == '\'') {
          ++p;
          current.push_back('\'');
        } else if (line[p] == '\'') {
          if (p + 1 < n && !IsSpace(line[p + 1])) return std::nullopt;
          done = true;
        } else {
          current.push_back(line[p]);
        }
      } else {
        if (p >= n) {
          done = true;
          break;
        }
        switch (line[p]) {
          case ' ':
          case '\n':
          case '\r':
          case '\t':
          case '\v':
          case '\f':
            done = true;
            break;
          case '"':
            in_double = true;
            break;
          case '\'':
            in_single = true;
            break;
          default:
            current.push_back(line[p]);
            break;
        }
      }
      if (p < n) ++p;
    }
    args.push_back(std::move(current));
  }
}

}  // namespace rockcache
