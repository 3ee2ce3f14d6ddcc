// GlobMatch against a reference matcher written from Redis 7.0's documented rules (and the
// quirks of its stringmatchlen, checked against redis-server 7.0.15 by hand: see glob.h).
#include "config/glob.h"

#include <catch2/catch.hpp>
#include <random>
#include <string>

using rockcache::GlobMatch;

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace glob_test {

namespace {

// The plain backtracking matcher Redis had before CVE-2022-36021: try every split for every
// '*'. Exponential in the worst case, fine for the short inputs below. `At` reads a NUL past
// the end, as Redis does on its NUL-terminated sds strings.
struct Reference {
  std::string pat, str;
  bool nocase;

  char At(const std::string& s, size_t i) const { return i < s.size() ? s[i] : '\0'; }
  static int Low(int c) { return c >= 'A' && c <= 'Z' ? c + 32 : c; }

  bool Match(size_t p, size_t s) const {
    size_t plen = pat.size() - p;
    size_t slen = str.size() - s;
    while (plen > 0 && slen > 0) {
      char pc = pat[p];
      if (pc == '*') {
        while (plen > 0 && At(pat, p + 1) == '*') {
          ++p;
          --plen;
        }
        if (plen == 1) return true;
        for (; slen > 0; ++s, --slen) {
          if (Match(p + 1, s)) return true;
        }
        return false;
      } else if (pc == '?') {
        ++s;
        --slen;
      } else if (pc == '[') {
        ++p;
        --plen;
        bool negate = At(pat, p) == '^';
        if (negate) {
          ++p;
          --plen;
        }
        bool match = false;
        int c = static_cast<signed char>(str[s]);
        while (true) {
          if (At(pat, p) == '\\' && plen >= 2) {
            ++p;
            --plen;
            if (pat[p] == str[s]) match = true;
          } else if (At(pat, p) == ']') {
            break;
          } else if (plen == 0) {
            --p;
            ++plen;
            break;
          } else if (plen >= 3 && pat[p + 1] == '-') {
            int a = static_cast<signed char>(pat[p]);
            int b = static_cast<signed char>(pat[p + 2]);
            if (a > b) std::swap(a, b);
            int x = c;
            if (nocase) {
              a = Low(a);
              b = Low(b);
              x = Low(x);
            }
            p += 2;
            plen -= 2;
            if (x >= a && x <= b) match = true;
          } else if (nocase ? Low(static_cast<signed char>(pat[p])) == Low(c) : pat[p] == str[s]) {
            match = true;
          }
          ++p;
          --plen;
        }
        if (negate) match = !match;
        if (!match) return false;
        ++s;
        --slen;
      } else {
        if (pc == '\\' && plen >= 2) {
          ++p;
          --plen;
        }
        int a = static_cast<signed char>(pat[p]);
        int b = static_cast<signed char>(str[s]);
        if (nocase ? Low(a) != Low(b) : a != b) return false;
        ++s;
        --slen;
      }
      ++p;
      --plen;
      if (slen == 0) {
        while (At(pat, p) == '*' && plen > 0) {
          ++p;
          --plen;
        }
        break;
      }
    }
    return plen == 0 && slen == 0;
  }
};

bool ReferenceMatch(const std::string& pat, const std::string& str, bool nocase) {
  return Reference{pat, str, nocase}.Match(0, 0);
}

}  // namespace

TEST_CASE("glob: Redis's rules and quirks", "[config][glob]") {
  CHECK(GlobMatch("h?llo", "hello"));
  CHECK_FALSE(GlobMatch("h?llo", "hllo"));
  CHECK(GlobMatch("h*llo", "heeeello"));
  CHECK(GlobMatch("h[ae]llo", "hallo"));
  CHECK_FALSE(GlobMatch("h[ae]llo", "hillo"));
  CHECK(GlobMatch("h[^e]llo", "hallo"));
  CHECK_FALSE(GlobMatch("h[^e]llo", "hello"));
  CHECK(GlobMatch("h[a-b]llo", "hbllo"));
  CHECK(GlobMatch("h[b-a]llo", "hbllo"));  // reversed range
  CHECK(GlobMatch("h\\*llo", "h*llo"));
  CHECK_FALSE(GlobMatch("h\\*llo", "hello"));
  CHECK(GlobMatch("POOL-*", "pool-threads", true));
  CHECK(GlobMatch(std::string_view("a\0*", 3), std::string_view("a\0bc", 4)));
  // Checked against redis-server 7.0.15 (KEYS over keys "" and "b"):
  CHECK_FALSE(GlobMatch("**", ""));  // an empty text matches only the empty pattern
  CHECK(GlobMatch("", ""));
  CHECK(GlobMatch("[^", "b"));              // unterminated negated empty class
  CHECK_FALSE(GlobMatch("[a-]", "b"));      // range 'a'..']'
  CHECK_FALSE(GlobMatch("[a-\xff]", "b"));  // signed bytes: range -1..'a'
  CHECK(GlobMatch("[abc", "c"));            // unterminated class
  CHECK(GlobMatch("a\\", "a\\"));           // trailing backslash is literal
}

TEST_CASE("glob: randomized differential test against the reference", "[config][glob]") {
  std::mt19937 rng(20260522);
  const std::string pattern_alphabet = "ab*?[]^-\\A\xff\x80";
  const std::string text_alphabet = "abA]-\\\xff";
  auto random_string = [&](const std::string& alphabet, size_t max_len) {
    std::string s(rng() % (max_len + 1), ' ');
    for (auto& c : s) c = alphabet[rng() % alphabet.size()];
    return s;
  };
  size_t matches = 0;
  for (int i = 0; i < 200000; ++i) {
    std::string pat = random_string(pattern_alphabet, 9);
    std::string str = random_string(text_alphabet, 7);
    bool nocase = (i & 1) != 0;
    bool expected = ReferenceMatch(pat, str, nocase);
    matches += expected;
    INFO("pattern '" << pat << "' text '" << str << "' nocase " << nocase);
    REQUIRE(GlobMatch(pat, str, nocase) == expected);
  }
  CHECK(matches > 1000);  // the generator exercises matches, not only mismatches
}

TEST_CASE("glob: pathological patterns take polynomial time", "[config][glob]") {
  std::string text(100, 'a');
  std::string pattern;
  for (int i = 0; i < 10; ++i) pattern += "*a";
  pattern += "*b";
  for (int i = 0; i < 10000; ++i) REQUIRE_FALSE(GlobMatch(pattern, text));
  // A long pattern does not grow the stack.
  std::string stars;
  for (int i = 0; i < 500000; ++i) stars += "*a";
  CHECK(GlobMatch(stars, std::string(500000, 'a')));
  CHECK_FALSE(GlobMatch(stars + "b", std::string(2000, 'a')));
}

}  // namespace glob_test
