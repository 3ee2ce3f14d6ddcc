#include "server/rdb/rdb_codec.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace rockcache::server::rdb {
namespace {

constexpr uint64_t kJonesReflected = 0x95ac9329ac4bc9b5ULL;
// An LZF string longer than this is refused (its stated length would be allocated).
constexpr uint64_t kMaxLzfExpanded = 512ull << 20;

// Redis's lzf_c.c hash of the three bytes at p, with the bytes before them still in `h`'s top
// byte, as its 32-bit unsigned arithmetic leaves them (only the low 16 bits of each term count).
inline uint32_t LzfIndex(uint32_t h) { return ((h >> (3 * 8 - 16)) - h * 5) & 0xffff; }

}  // namespace

uint64_t Crc64(uint64_t crc, std::string_view data) {
  // Byte at a time over a table of the 256 single-byte steps (about 1 ns a byte: an RDB file
  // of 1 GB is checked in about a second).
  static const std::vector<uint64_t> table = [] {
    std::vector<uint64_t> t(256);
    for (uint64_t b = 0; b < 256; ++b) {
      uint64_t c = b;
      for (int bit = 0; bit < 8; ++bit) c = (c & 1) ? (c >> 1) ^ kJonesReflected : c >> 1;
      t[b] = c;
    }
    return t;
  }();
  for (unsigned char byte : data) crc = table[(crc ^ byte) & 0xff] ^ (crc >> 8);
  return crc;
}

void AppendLength(std::string* out, uint64_t length) {
  if (length < (1u << 6)) {
    out->push_back(static_cast<char>(length));
  } else if (length < (1u << 14)) {
    out->push_back(static_cast<char>(0x40 | (length >> 8)));
    out->push_back(static_cast<char>(length & 0xff));
  } else if (length <= UINT32_MAX) {
    out->push_back(static_cast<char>(0x80));
    for (int shift = 24; shift >= 0; shift -= 8) {
      out->push_back(static_cast<char>((length >> shift) & 0xff));
    }
  } else {
    out->push_back(static_cast<char>(0x81));
    for (int shift = 56; shift >= 0; shift -= 8) {
      out->push_back(static_cast<char>((length >> shift) & 0xff));
    }
  }
}

void AppendString(std::string* out, std::string_view value) {
  AppendLength(out, value.size());
  out->append(value);
}

void AppendLittleEndian(std::string* out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

void AppendBinaryDouble(std::string* out, double value) {
  uint64_t bits = 0;
  std::memcpy(&bits, &value, 8);
  AppendLittleEndian(out, bits, 8);
}

bool ParseStrictInt64(std::string_view s, int64_t* value) {
  if (s.empty() || s.size() > 20) return false;
  if (s.size() == 1 && s[0] == '0') return *value = 0, true;
  size_t i = 0;
  bool negative = false;
  if (s[0] == '-') {
    negative = true;
    i = 1;
    if (s.size() == 1) return false;
  }
  if (s[i] < '1' || s[i] > '9') return false;
  uint64_t v = 0;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    const uint64_t digit = static_cast<uint64_t>(s[i] - '0');
    if (v > (UINT64_MAX - digit) / 10) return false;
    v = v * 10 + digit;
  }
  if (negative) {
    if (v > uint64_t{1} << 63) return false;
    *value = static_cast<int64_t>(0 - v);
  } else {
    if (v > uint64_t{INT64_MAX}) return false;
    *value = static_cast<int64_t>(v);
  }
  return true;
}

void AppendRdbString(std::string* out, std::string_view value) {
  int64_t n = 0;
  if (value.size() <= 11 && ParseStrictInt64(value, &n)) {
    if (n >= -128 && n <= 127) {
      out->push_back(static_cast<char>(0xc0));
      AppendLittleEndian(out, static_cast<uint64_t>(n), 1);
      return;
    }
    if (n >= -32768 && n <= 32767) {
      out->push_back(static_cast<char>(0xc1));
      AppendLittleEndian(out, static_cast<uint64_t>(n), 2);
      return;
    }
    if (n >= INT32_MIN && n <= INT32_MAX) {
      out->push_back(static_cast<char>(0xc2));
      AppendLittleEndian(out, static_cast<uint64_t>(n), 4);
      return;
    }
  }
  if (value.size() > 20) {
    std::string compressed;
    const size_t size = LzfCompress(value, value.size() - 4, &compressed);
    if (size > 0) {
      out->push_back(static_cast<char>(0xc3));
      AppendLength(out, size);
      AppendLength(out, value.size());
      out->append(compressed, 0, size);
      return;
    }
  }
  AppendString(out, value);
}

size_t LzfCompress(std::string_view input, size_t out_limit, std::string* out) {
  // Positions are indexes into `input`; the table holds position + 1 (0: empty). Matches are
  // taken exactly where lzf_compress takes them: a reference at position 0 never matches (its
  // `ref > in_data`), references are at most 8 KiB back, a run of literals holds at most 32.
  constexpr size_t kMaxLit = 32, kMaxOff = 1 << 13, kMaxRef = (1 << 8) + (1 << 3);
  const size_t n = input.size();
  if (n == 0 || out_limit == 0) return 0;
  const auto* in = reinterpret_cast<const unsigned char*>(input.data());
  std::vector<uint32_t> table(1 << 16, 0);
  out->assign(out_limit + 8, '\0');
  auto* o = reinterpret_cast<unsigned char*>(out->data());
  size_t op = 1, ip = 0;  // op: one byte reserved for the first run's header
  size_t lit = 0;
  uint32_t hval = (uint32_t{in[0]} << 8) | (n > 1 ? in[1] : 0);
  while (n >= 3 && ip < n - 2) {
    hval = (hval << 8) | in[ip + 2];
    uint32_t& slot = table[LzfIndex(hval)];
    const size_t ref_plus = slot;
    slot = static_cast<uint32_t>(ip + 1);
    const size_t ref = ref_plus - 1;
    if (ref_plus > 1 && ip - ref - 1 < kMaxOff && in[ref] == in[ip] && in[ref + 1] == in[ip + 1] &&
        in[ref + 2] == in[ip + 2]) {
      const size_t off = ip - ref - 1;
      size_t len = 2;
      size_t maxlen = n - ip - len;
      if (maxlen > kMaxRef) maxlen = kMaxRef;
      o[op - lit - 1] = static_cast<unsigned char>(lit - 1);  // stop the run
      if (lit == 0) op -= 1;                                  // an empty run is undone
      if (op + 3 + 1 >= out_limit) return 0;
      // lzf_compress's loop, unrolled part included: with more than 16 bytes left it compares
      // 16 more before checking maxlen, so a match near the end may run one or two bytes past
      // maxlen (still inside the input).
      bool mismatch = false;
      if (maxlen > 16) {
        for (int k = 0; k < 16 && !mismatch; ++k) {
          ++len;
          mismatch = in[ref + len] != in[ip + len];
        }
      }
      if (!mismatch) {
        do {
          ++len;
        } while (len < maxlen && in[ref + len] == in[ip + len]);
      }
      len -= 2;  // octets - 1
      ++ip;
      if (len < 7) {
        o[op++] = static_cast<unsigned char>((off >> 8) + (len << 5));
      } else {
        o[op++] = static_cast<unsigned char>((off >> 8) + (7 << 5));
        o[op++] = static_cast<unsigned char>(len - 7);
      }
      o[op++] = static_cast<unsigned char>(off & 0xff);
      lit = 0;
      ++op;  // start a run
      ip += len + 1;
      if (ip >= n - 2) break;
      ip -= 2;  // VERY_FAST: hash the two positions before the new one
      hval = (uint32_t{in[ip]} << 8) | in[ip + 1];
      hval = (hval << 8) | in[ip + 2];
      table[LzfIndex(hval)] = static_cast<uint32_t>(ip + 1);
      ++ip;
      hval = (hval << 8) | in[ip + 2];
      table[LzfIndex(hval)] = static_cast<uint32_t>(ip + 1);
      ++ip;
    } else {
      if (op >= out_limit) return 0;
      ++lit;
      o[op++] = in[ip++];
      if (lit == kMaxLit) {
        o[op - lit - 1] = static_cast<unsigned char>(lit - 1);
        lit = 0;
        ++op;
      }
    }
  }
  if (op + 3 > out_limit) return 0;
  while (ip < n) {
    ++lit;
    o[op++] = in[ip++];
    if (lit == kMaxLit) {
      o[op - lit - 1] = static_cast<unsigned char>(lit - 1);
      lit = 0;
      ++op;
    }
  }
  o[op - lit - 1] = static_cast<unsigned char>(lit - 1);
  if (lit == 0) op -= 1;
  out->resize(op);
  return op;
}

void AppendFooter(std::string* payload) {
  payload->push_back(static_cast<char>(kRdbVersion & 0xff));
  payload->push_back(static_cast<char>(kRdbVersion >> 8));
  const uint64_t crc = Crc64(0, *payload);
  for (int i = 0; i < 8; ++i) payload->push_back(static_cast<char>((crc >> (8 * i)) & 0xff));
}

bool CheckFooter(std::string_view payload, std::string_view* body) {
  if (payload.size() < 10) return false;
  const auto* p = reinterpret_cast<const unsigned char*>(payload.data()) + payload.size() - 10;
  const uint16_t version = static_cast<uint16_t>(p[0] | (p[1] << 8));
  if (version > kRdbVersion) return false;
  uint64_t crc = 0;
  for (int i = 0; i < 8; ++i) crc |= uint64_t{p[2 + i]} << (8 * i);
  if (crc != Crc64(0, payload.substr(0, payload.size() - 8))) return false;
  *body = payload.substr(0, payload.size() - 10);
  return true;
}

bool Reader::ReadByte(uint8_t* byte) {
  if (pos_ >= data_.size()) return false;
  *byte = static_cast<uint8_t>(data_[pos_++]);
  return true;
}

bool Reader::ReadRaw(uint64_t n, std::string_view* bytes) {
  if (n > data_.size() - pos_) return false;
  *bytes = data_.substr(pos_, n);
  pos_ += n;
  return true;
}

bool Reader::ReadLittleEndian(int bytes, uint64_t* value) {
  if (static_cast<size_t>(bytes) > data_.size() - pos_) return false;
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= uint64_t{static_cast<uint8_t>(data_[pos_ + i])} << (8 * i);
  pos_ += bytes;
  *value = v;
  return true;
}

bool Reader::ReadBinaryDouble(double* value) {
  uint64_t bits = 0;
  if (!ReadLittleEndian(8, &bits)) return false;
  std::memcpy(value, &bits, 8);
  return true;
}

bool Reader::ReadTextDouble(double* value) {
  uint8_t len = 0;
  if (!ReadByte(&len)) return false;
  if (len == 253) return *value = std::nan(""), true;
  if (len == 254) return *value = HUGE_VAL, true;
  if (len == 255) return *value = -HUGE_VAL, true;
  std::string_view text;
  if (!ReadRaw(len, &text)) return false;
  const std::string copy(text);
  char* end = nullptr;
  *value = std::strtod(copy.c_str(), &end);
  return end == copy.c_str() + copy.size() && !copy.empty();
}

bool Reader::ReadLength(uint64_t* length, bool* encoded) {
  *encoded = false;
  uint8_t first = 0;
  if (!ReadByte(&first)) return false;
  const int kind = first >> 6;
  if (kind == 0) {
    *length = first & 0x3f;
    return true;
  }
  if (kind == 1) {
    uint8_t second = 0;
    if (!ReadByte(&second)) return false;
    *length = (uint64_t{first & 0x3fu} << 8) | second;
    return true;
  }
  if (kind == 3) {
    *encoded = true;
    *length = first & 0x3f;
    return true;
  }
  const int bytes = first == 0x80 ? 4 : first == 0x81 ? 8 : 0;
  if (bytes == 0) return false;
  uint64_t value = 0;
  for (int i = 0; i < bytes; ++i) {
    uint8_t b = 0;
    if (!ReadByte(&b)) return false;
    value = (value << 8) | b;
  }
  *length = value;
  return true;
}

bool Reader::ReadString(std::string* value) {
  uint64_t length = 0;
  bool encoded = false;
  if (!ReadLength(&length, &encoded)) return false;
  if (!encoded) {
    if (length > data_.size() - pos_) return false;
    value->assign(data_.substr(pos_, length));
    pos_ += length;
    return true;
  }
  if (length <= 2) {  // int8, int16, int32, little endian
    const int bytes = 1 << length;
    if (static_cast<size_t>(bytes) > data_.size() - pos_) return false;
    uint32_t raw = 0;
    for (int i = 0; i < bytes; ++i)
      raw |= uint32_t{static_cast<uint8_t>(data_[pos_ + i])} << (8 * i);
    pos_ += bytes;
    int64_t number = bytes == 1   ? static_cast<int8_t>(raw)
                     : bytes == 2 ? static_cast<int16_t>(raw)
                                  : static_cast<int32_t>(raw);
    *value = std::to_string(number);
    return true;
  }
  if (length == 3) {  // LZF: compressed length, original length, data
    uint64_t compressed = 0, original = 0;
    bool e1 = false, e2 = false;
    if (!ReadLength(&compressed, &e1) || !ReadLength(&original, &e2) || e1 || e2) return false;
    if (compressed > data_.size() - pos_ || original > kMaxLzfExpanded) return false;
    const std::string_view input = data_.substr(pos_, compressed);
    pos_ += compressed;
    return LzfDecompress(input, original, value);
  }
  return false;
}

bool LzfDecompress(std::string_view compressed, size_t expected, std::string* out) {
  out->clear();
  if (expected > compressed.size() * kLzfMaxExpansion) return false;
  out->reserve(expected);
  const auto* in = reinterpret_cast<const unsigned char*>(compressed.data());
  size_t i = 0;
  const size_t n = compressed.size();
  while (i < n) {
    unsigned int ctrl = in[i++];
    if (ctrl < 32) {  // a literal run of ctrl + 1 bytes
      const size_t run = ctrl + 1;
      if (run > n - i || out->size() + run > expected) return false;
      out->append(reinterpret_cast<const char*>(in + i), run);
      i += run;
      continue;
    }
    size_t len = ctrl >> 5;  // a back reference
    if (len == 7) {
      if (i >= n) return false;
      len += in[i++];
    }
    len += 2;
    if (i >= n) return false;
    const size_t distance = ((ctrl & 0x1f) << 8) + in[i++] + 1;
    if (distance > out->size() || out->size() + len > expected) return false;
    const size_t from = out->size() - distance;
    for (size_t k = 0; k < len; ++k) {  // may overlap itself; no reallocation (reserved)
      const char c = (*out)[from + k];
      out->push_back(c);
    }
  }
  return out->size() == expected;
}

}  // namespace rockcache::server::rdb
