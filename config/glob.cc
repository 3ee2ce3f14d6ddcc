#include "config/glob.h"

#include <utility>

namespace rockcache {
namespace {

// ASCII-only folding, like tolower() in the C locale Redis runs its matcher in. Works on the
// signed value Redis compares (a byte >= 0x80 is negative and left alone).
int Lower(int c) { return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c; }
int Signed(char c) { return static_cast<signed char>(c); }

bool SameChar(char a, char b, bool nocase) {
  return nocase ? Lower(Signed(a)) == Lower(Signed(b)) : a == b;
}

// Matches the one-byte token at pat[p] (anything but '*') against `c`. Sets *next to the
// position after the token. The token's extent depends only on the pattern.
bool MatchToken(std::string_view pat, size_t p, char c, bool nocase, size_t* next) {
  const size_t m = pat.size();
  switch (pat[p]) {
    case '?':
      *next = p + 1;
      return true;
    case '[': {
      ++p;
      const bool negate = p < m && pat[p] == '^';
      if (negate) ++p;
      bool match = false;
      while (true) {
        if (p + 1 < m && pat[p] == '\\') {
          ++p;
          if (pat[p] == c) match = true;  // escaped: exact byte, even with nocase (as Redis)
        } else if (p < m && pat[p] == ']') {
          break;
        } else if (p >= m) {
          --p;  // unterminated: the class ends with the pattern
          break;
        } else if (p + 2 < m && pat[p + 1] == '-') {
          int lo = Signed(pat[p]);
          int hi = Signed(pat[p + 2]);
          int ch = Signed(c);
          if (lo > hi) std::swap(lo, hi);
          if (nocase) {
            lo = Lower(lo);
            hi = Lower(hi);
            ch = Lower(ch);
          }
          if (ch >= lo && ch <= hi) match = true;
          p += 2;
        } else if (SameChar(pat[p], c, nocase)) {
          match = true;
        }
        ++p;
      }
      *next = p + 1;
      return negate ? !match : match;
    }
    case '\\':
      if (p + 1 < m) ++p;  // a trailing '\' is itself
      [[fallthrough]];
    default:
      *next = p + 1;
      return SameChar(pat[p], c, nocase);
  }
}

}  // namespace

bool GlobMatch(std::string_view pattern, std::string_view text, bool nocase) {
  if (text.empty()) return pattern.empty();  // Redis's loop never runs on an empty text
  const size_t m = pattern.size();
  const size_t n = text.size();
  constexpr size_t kNone = static_cast<size_t>(-1);
  size_t p = 0;
  size_t s = 0;
  size_t star_p = kNone;  // pattern position right after the latest run of '*'
  size_t star_s = 0;      // text position that run of '*' currently stops at
  while (s < n) {
    if (p < m && pattern[p] == '*') {
      while (p < m && pattern[p] == '*') ++p;
      if (p == m) return true;  // a trailing '*' takes the rest
      star_p = p;
      star_s = s;
      continue;
    }
    size_t next = 0;
    if (p < m && MatchToken(pattern, p, text[s], nocase, &next)) {
      p = next;
      ++s;
      continue;
    }
    // Mismatch: let the latest '*' take one more byte. Earlier stars never need to move: any
    // longer match for them is covered by the latest one starting later (Redis's
    // skipLongerMatches argument).
    if (star_p == kNone) return false;
    p = star_p;
    s = ++star_s;
  }
  while (p < m && pattern[p] == '*') ++p;
  return p == m;
}

}  // namespace rockcache
