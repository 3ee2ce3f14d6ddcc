#include "server/rdb/listpack.h"

#include "server/rdb/rdb_codec.h"

namespace rockcache::server::rdb {
namespace {

// The size of an entry's backlen for an entry of `n` bytes (encoding + data).
size_t BacklenSize(uint64_t n) {
  return n <= 127 ? 1 : n < 16383 ? 2 : n < 2097151 ? 3 : n < 268435455 ? 4 : 5;
}

void AppendBacklen(std::string* out, uint64_t n) {
  const size_t size = BacklenSize(n);
  // Most significant group first; every byte but the first has its top bit set.
  for (size_t i = 0; i < size; ++i) {
    const unsigned shift = static_cast<unsigned>(7 * (size - 1 - i));
    unsigned char b = static_cast<unsigned char>((n >> shift) & 127);
    if (i > 0) b |= 128;
    out->push_back(static_cast<char>(b));
  }
}

int64_t SignExtend(uint64_t v, int bits) {
  const uint64_t sign = uint64_t{1} << (bits - 1);
  if (bits < 64 && (v & sign)) v |= ~((uint64_t{1} << bits) - 1);
  return static_cast<int64_t>(v);
}

}  // namespace

void ListpackWriter::Append(std::string_view value) {
  int64_t n = 0;
  if (ParseStrictInt64(value, &n)) return AppendInt(n);
  AppendString(value);
}

void ListpackWriter::AppendInt(int64_t v) {
  const size_t start = body_.size();
  const auto u = static_cast<uint64_t>(v);
  if (v >= 0 && v <= 127) {
    body_.push_back(static_cast<char>(v));
  } else if (v >= -4096 && v <= 4095) {
    const uint64_t w = u & 0x1fff;
    body_.push_back(static_cast<char>(0xc0 | (w >> 8)));
    body_.push_back(static_cast<char>(w & 0xff));
  } else if (v >= -32768 && v <= 32767) {
    body_.push_back(static_cast<char>(0xf1));
    AppendLittleEndian(&body_, u, 2);
  } else if (v >= -8388608 && v <= 8388607) {
    body_.push_back(static_cast<char>(0xf2));
    AppendLittleEndian(&body_, u, 3);
  } else if (v >= INT32_MIN && v <= INT32_MAX) {
    body_.push_back(static_cast<char>(0xf3));
    AppendLittleEndian(&body_, u, 4);
  } else {
    body_.push_back(static_cast<char>(0xf4));
    AppendLittleEndian(&body_, u, 8);
  }
  AppendBacklen(&body_, body_.size() - start);
  ++count_;
}

void ListpackWriter::AppendString(std::string_view s) {
  const size_t start = body_.size();
  const size_t len = s.size();
  if (len < 64) {
    body_.push_back(static_cast<char>(0x80 | len));
  } else if (len < 4096) {
    body_.push_back(static_cast<char>(0xe0 | (len >> 8)));
    body_.push_back(static_cast<char>(len & 0xff));
  } else {
    body_.push_back(static_cast<char>(0xf0));
    AppendLittleEndian(&body_, len, 4);
  }
  body_.append(s);
  AppendBacklen(&body_, body_.size() - start);
  ++count_;
}

std::string ListpackWriter::Finish() const {
  std::string out;
  out.reserve(bytes());
  AppendLittleEndian(&out, bytes(), 4);
  AppendLittleEndian(&out, count_ < 65535 ? count_ : 65535, 2);
  out.append(body_);
  out.push_back(static_cast<char>(0xff));
  return out;
}

bool DecodeListpack(std::string_view lp, std::vector<PackedValue>* out, uint64_t max_entries) {
  if (lp.size() < 7) return false;
  const auto* p = reinterpret_cast<const unsigned char*>(lp.data());
  const size_t total = LittleEndian(p, 4);
  const uint64_t stated = LittleEndian(p + 4, 2);
  if (total != lp.size() || p[total - 1] != 0xff) return false;
  size_t pos = 6;
  const size_t end = total - 1;
  uint64_t found = 0;
  while (pos < end) {
    const size_t start = pos;
    const unsigned char b = p[pos];
    PackedValue value;
    uint64_t data_len = 0;  // string bytes after the encoding
    size_t header = 1;
    if ((b & 0x80) == 0) {
      value.is_int = true;
      value.number = b & 0x7f;
    } else if ((b & 0xc0) == 0x80) {
      data_len = b & 0x3f;
    } else if ((b & 0xe0) == 0xc0) {
      if (end - pos < 2) return false;
      value.is_int = true;
      value.number = SignExtend((uint64_t{b & 0x1fu} << 8) | p[pos + 1], 13);
      header = 2;
    } else if ((b & 0xf0) == 0xe0) {
      if (end - pos < 2) return false;
      data_len = (uint64_t{b & 0x0fu} << 8) | p[pos + 1];
      header = 2;
    } else if (b == 0xf0) {
      if (end - pos < 5) return false;
      data_len = LittleEndian(p + pos + 1, 4);
      header = 5;
    } else if (b >= 0xf1 && b <= 0xf4) {
      const int bytes = b == 0xf1 ? 2 : b == 0xf2 ? 3 : b == 0xf3 ? 4 : 8;
      if (end - pos < 1 + static_cast<size_t>(bytes)) return false;
      value.is_int = true;
      value.number = SignExtend(LittleEndian(p + pos + 1, bytes), 8 * bytes);
      header = 1 + static_cast<size_t>(bytes);
    } else {
      return false;  // 0xf5..0xfe are unused; 0xff only at the end
    }
    if (data_len > end - pos - header) return false;
    if (!value.is_int) value.text = lp.substr(pos + header, data_len);
    const uint64_t entry_len = header + data_len;
    const size_t backlen = BacklenSize(entry_len);
    if (backlen > end - pos - entry_len) return false;
    std::string expected;
    AppendBacklen(&expected, entry_len);
    if (lp.compare(pos + entry_len, backlen, expected) != 0) return false;
    pos = start + entry_len + backlen;
    if (++found > max_entries) return false;
    out->push_back(value);
  }
  return stated == 65535 || stated == found;
}

}  // namespace rockcache::server::rdb
