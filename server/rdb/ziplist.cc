#include "server/rdb/ziplist.h"

#include <string>

#include "server/rdb/rdb_codec.h"

namespace rockcache::server::rdb {
namespace {

template <typename T>
int64_t AsSigned(uint64_t v) {
  return static_cast<int64_t>(static_cast<T>(v));
}

}  // namespace

bool DecodeZiplist(std::string_view zl, std::vector<PackedValue>* out, uint64_t max_entries) {
  if (zl.size() < 11) return false;
  const auto* p = reinterpret_cast<const unsigned char*>(zl.data());
  const size_t total = LittleEndian(p, 4);
  const size_t tail = LittleEndian(p + 4, 4);
  const uint64_t stated = LittleEndian(p + 8, 2);
  if (total != zl.size() || p[total - 1] != 0xff) return false;
  const size_t end = total - 1;
  size_t pos = 10;
  size_t prev_len = 0;
  size_t last_start = 10;
  uint64_t found = 0;
  while (pos < end) {
    const size_t start = pos;
    size_t prevlen = p[pos];
    size_t prevlen_size = 1;
    if (prevlen == 254) {
      if (end - pos < 5) return false;
      prevlen = LittleEndian(p + pos + 1, 4);
      prevlen_size = 5;
    } else if (prevlen == 255) {
      return false;
    }
    if (prevlen != prev_len) return false;
    pos += prevlen_size;
    if (pos >= end) return false;
    const unsigned char enc = p[pos];
    PackedValue value;
    size_t header = 1;
    uint64_t data_len = 0;
    switch (enc >> 6) {
      case 0:
        data_len = enc & 0x3f;
        break;
      case 1:
        if (end - pos < 2) return false;
        data_len = (uint64_t{enc & 0x3fu} << 8) | p[pos + 1];
        header = 2;
        break;
      case 2:
        if (enc != 0x80 || end - pos < 5) return false;
        data_len = (uint64_t{p[pos + 1]} << 24) | (uint64_t{p[pos + 2]} << 16) |
                   (uint64_t{p[pos + 3]} << 8) | p[pos + 4];
        header = 5;
        break;
      default: {
        value.is_int = true;
        int bytes = 0;
        if (enc == 0xc0) {
          bytes = 2;
        } else if (enc == 0xd0) {
          bytes = 4;
        } else if (enc == 0xe0) {
          bytes = 8;
        } else if (enc == 0xf0) {
          bytes = 3;
        } else if (enc == 0xfe) {
          bytes = 1;
        } else if (enc >= 0xf1 && enc <= 0xfd) {
          value.number = (enc & 0x0f) - 1;
        } else {
          return false;
        }
        if (end - pos < 1 + static_cast<size_t>(bytes)) return false;
        const uint64_t raw = LittleEndian(p + pos + 1, bytes);
        if (bytes == 1) value.number = AsSigned<int8_t>(raw);
        if (bytes == 2) value.number = AsSigned<int16_t>(raw);
        if (bytes == 3) value.number = static_cast<int64_t>(raw << 40) >> 40;
        if (bytes == 4) value.number = AsSigned<int32_t>(raw);
        if (bytes == 8) value.number = static_cast<int64_t>(raw);
        header = 1 + static_cast<size_t>(bytes);
      }
    }
    if (header > end - pos || data_len > end - pos - header) return false;
    if (!value.is_int) value.text = zl.substr(pos + header, data_len);
    pos += header + data_len;
    prev_len = pos - start;
    last_start = start;
    if (++found > max_entries) return false;
    out->push_back(value);
  }
  if (found > 0 ? tail != last_start : tail != 10) return false;
  return stated == 65535 || stated == found;
}

bool DecodeZipmap(std::string_view zm, std::vector<PackedValue>* out) {
  const auto* p = reinterpret_cast<const unsigned char*>(zm.data());
  const size_t n = zm.size();
  if (n < 2 || p[n - 1] != 0xff) return false;
  size_t pos = 1;
  auto read_len = [&](uint64_t* len) {
    if (pos >= n - 1) return false;
    if (p[pos] < 254) {
      *len = p[pos++];
      return true;
    }
    if (p[pos] != 254 || n - 1 - pos < 5) return false;
    *len = LittleEndian(p + pos + 1, 4);
    pos += 5;
    return true;
  };
  while (pos < n - 1) {
    uint64_t klen = 0, vlen = 0;
    if (!read_len(&klen) || klen > n - 1 - pos) return false;
    PackedValue key;
    key.text = zm.substr(pos, klen);
    pos += klen;
    if (!read_len(&vlen) || pos >= n - 1) return false;
    const uint64_t free = p[pos++];
    if (vlen > n - 1 - pos || free > n - 1 - pos - vlen) return false;
    PackedValue value;
    value.text = zm.substr(pos, vlen);
    pos += vlen + free;
    out->push_back(key);
    out->push_back(value);
  }
  return pos == n - 1;
}

bool DecodeIntset(std::string_view is, std::vector<int64_t>* out) {
  if (is.size() < 8) return false;
  const auto* p = reinterpret_cast<const unsigned char*>(is.data());
  const uint64_t width = LittleEndian(p, 4);
  const uint64_t length = LittleEndian(p + 4, 4);
  if (width != 2 && width != 4 && width != 8) return false;
  if (length == 0 || (is.size() - 8) / width != length || (is.size() - 8) % width != 0) {
    return false;
  }
  out->reserve(out->size() + length);
  for (uint64_t i = 0; i < length; ++i) {
    const uint64_t raw = LittleEndian(p + 8 + i * width, static_cast<int>(width));
    const int64_t v = width == 2   ? AsSigned<int16_t>(raw)
                      : width == 4 ? AsSigned<int32_t>(raw)
                                   : static_cast<int64_t>(raw);
    if (i > 0 && v <= out->back()) return false;
    out->push_back(v);
  }
  return true;
}

std::string EncodeIntset(const std::vector<int64_t>& sorted) {
  int width = 2;
  for (int64_t v : sorted) {
    if (v < INT32_MIN || v > INT32_MAX) {
      width = 8;
      break;
    }
    if (v < INT16_MIN || v > INT16_MAX) width = 4;
  }
  std::string out;
  AppendLittleEndian(&out, static_cast<uint64_t>(width), 4);
  AppendLittleEndian(&out, sorted.size(), 4);
  for (int64_t v : sorted) AppendLittleEndian(&out, static_cast<uint64_t>(v), width);
  return out;
}

}  // namespace rockcache::server::rdb
