#include "config/glob.h"

#include <cctype>

namespace rockcache {
namespace {

char Fold(char c, bool nocase) {
  return nocase ? static_cast<char>(std::tolower(static_cast<unsigned char>(c))) : c;
}

// Matches a `[...]` class starting after the '['. On return *p points at the closing ']' (or the
// end of the pattern when unterminated, which Redis treats as closing there).
bool MatchClass(std::string_view pat, size_t* p, char c, bool nocase) {
  bool negate = false;
  bool match = false;
  if (*p < pat.size() && pat[*p] == '^') {
    negate = true;
    ++*p;
  }
  while (*p < pat.size() && pat[*p] != ']') {
    if (pat[*p] == '\\' && *p + 1 < pat.size()) {
      ++*p;
      if (Fold(pat[*p], nocase) == Fold(c, nocase)) match = true;
    } else if (*p + 2 < pat.size() && pat[*p + 1] == '-') {
      char lo = Fold(pat[*p], nocase);
      char hi = Fold(pat[*p + 2], nocase);
      if (lo > hi) std::swap(lo, hi);
      char fc = Fold(c, nocase);
      if (fc >= lo && fc <= hi) match = true;
      *p += 2;
    } else if (Fold(pat[*p], nocase) == Fold(c, nocase)) {
      match = true;
    }
    ++*p;
  }
  return negate ? !match : match;
}

bool MatchFrom(std::string_view pat, size_t p, std::string_view str, size_t s, bool nocase,
               int depth) {
  if (depth > 1000) return false;  // pathological patterns: refuse rather than recurse forever
  while (p < pat.size()) {
    switch (pat[p]) {
      case '*':
        while (p + 1 < pat.size() && pat[p + 1] == '*') ++p;
        if (p + 1 == pat.size()) return true;
        for (size_t i = s; i <= str.size(); ++i) {
          if (MatchFrom(pat, p + 1, str, i, nocase, depth + 1)) return true;
        }
        return false;
      case '?':
        if (s >= str.size()) return false;
        ++s;
        break;
      case '[': {
        if (s >= str.size()) return false;
        ++p;
        if (!MatchClass(pat, &p, str[s], nocase)) return false;
        ++s;
        break;
      }
      case '\\':
        if (p + 1 < pat.size()) ++p;
        [[fallthrough]];
      default:
        if (s >= str.size() || Fold(pat[p], nocase) != Fold(str[s], nocase)) return false;
        ++s;
        break;
    }
    ++p;
  }
  return s == str.size();
}

}  // namespace

bool GlobMatch(std::string_view pattern, std::string_view text, bool nocase) {
  return MatchFrom(pattern, 0, text, 0, nocase, 0);
}

}  // namespace rockcache
