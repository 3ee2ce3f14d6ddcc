#include "storage/numbers.h"

#include <cctype>
#include <cerrno>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace rockcache::storage {

bool ParseInt64(std::string_view s, int64_t* out) {
  constexpr size_t kLongStrSize = 21;  // Redis LONG_STR_SIZE
  if (s.empty() || s.size() >= kLongStrSize) return false;
  if (s.size() == 1 && s[0] == '0') {
    *out = 0;
    return true;
  }
  size_t i = 0;
  bool negative = false;
  if (s[0] == '-') {
    negative = true;
    if (++i == s.size()) return false;
  }
  if (s[i] < '1' || s[i] > '9') return false;
  uint64_t v = static_cast<uint64_t>(s[i++] - '0');
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    uint64_t digit = static_cast<uint64_t>(s[i] - '0');
    if (v > UINT64_MAX / 10) return false;
    v *= 10;
    if (v > UINT64_MAX - digit) return false;
    v += digit;
  }
  if (negative) {
    if (v > static_cast<uint64_t>(INT64_MAX) + 1) return false;
    *out = static_cast<int64_t>(0 - v);
  } else {
    if (v > static_cast<uint64_t>(INT64_MAX)) return false;
    *out = static_cast<int64_t>(v);
  }
  return true;
}

namespace {

constexpr size_t kMaxLongDoubleChars = 5 * 1024;  // Redis MAX_LONG_DOUBLE_CHARS

template <typename T>
bool ParseFloating(std::string_view s, T* out, T (*conv)(const char*, char**), T huge) {
  if (s.empty() || s.size() >= kMaxLongDoubleChars) return false;
  char buf[kMaxLongDoubleChars];
  std::memcpy(buf, s.data(), s.size());
  buf[s.size()] = '\0';
  errno = 0;
  char* end = nullptr;
  T value = conv(buf, &end);
  if (std::isspace(static_cast<unsigned char>(buf[0])) || *end != '\0' ||
      static_cast<size_t>(end - buf) != s.size() ||
      (errno == ERANGE && (value == huge || value == -huge || std::fpclassify(value) == FP_ZERO)) ||
      errno == EINVAL || std::isnan(value)) {
    return false;
  }
  *out = value;
  return true;
}

}  // namespace

bool ParseLongDouble(std::string_view s, long double* out) {
  return ParseFloating<long double>(s, out, &std::strtold, HUGE_VALL);
}

bool ParseDouble(std::string_view s, double* out) {
  return ParseFloating<double>(s, out, &std::strtod, HUGE_VAL);
}

std::string FormatLongDouble(long double value) {
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  if (std::isnan(value)) return "nan";
  std::string buf(kMaxLongDoubleChars, '\0');
  int len = std::snprintf(buf.data(), buf.size(), "%.17Lf", value);
  if (len < 0 || static_cast<size_t>(len) + 1 > buf.size()) return "0";
  buf.resize(static_cast<size_t>(len));
  if (buf.find('.') != std::string::npos) {
    while (!buf.empty() && buf.back() == '0') buf.pop_back();
    if (!buf.empty() && buf.back() == '.') buf.pop_back();
  }
  if (buf == "-0") buf = "0";
  return buf;
}

std::string FormatScore(double value) {
  if (value == 0 && std::signbit(value)) return "-0";
  return FormatDouble(value);
}

std::string FormatDouble(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  // Whole numbers print as integers, as Redis's addReplyDouble does before fpconv_dtoa
  // (a typical timestamp score 1700000000 is "1700000000", not "1.7e+9"); -0 prints "0".
  constexpr double kIntegral = static_cast<double>(LLONG_MAX / 2);
  if (value >= -kIntegral && value <= kIntegral && value == std::trunc(value)) {
    return std::to_string(static_cast<long long>(value));
  }
  bool neg = std::signbit(value);
  std::string out = neg ? "-" : "";
  // Shortest round-trip digits, as grisu2 in Redis's fpconv_dtoa finds them.
  char sci[64];
  auto res = std::to_chars(sci, sci + sizeof(sci), std::fabs(value), std::chars_format::scientific);
  std::string_view repr(sci, static_cast<size_t>(res.ptr - sci));
  size_t e = repr.find('e');
  std::string digits;
  for (char c : repr.substr(0, e)) {
    if (c != '.') digits.push_back(c);
  }
  int exp10 = 0;
  std::from_chars(repr.data() + e + (repr[e + 1] == '+' ? 2 : 1), repr.data() + repr.size(), exp10);
  int ndigits = static_cast<int>(digits.size());
  int k = exp10 - (ndigits - 1);  // value = digits * 10^k
  int exp = std::abs(k + ndigits - 1);
  // The three layouts of fpconv's emit_digits.
  if (k >= 0 && exp < ndigits + 7) {
    return out + digits + std::string(static_cast<size_t>(k), '0');
  }
  if (k < 0 && (k > -7 || exp < 4)) {
    int offset = ndigits - std::abs(k);
    if (offset <= 0) {
      return out + "0." + std::string(static_cast<size_t>(-offset), '0') + digits;
    }
    return out + digits.substr(0, static_cast<size_t>(offset)) + "." +
           digits.substr(static_cast<size_t>(offset));
  }
  out.push_back(digits[0]);
  if (ndigits > 1) out += "." + digits.substr(1);
  out += (k + ndigits - 1 < 0) ? "e-" : "e+";
  out += std::to_string(exp);
  return out;
}

std::string FormatInt64(int64_t value) { return std::to_string(value); }

}  // namespace rockcache::storage
