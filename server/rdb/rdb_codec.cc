#include "server/rdb/rdb_codec.h"

namespace rockcache::server::rdb {
namespace {

constexpr uint64_t kJonesReflected = 0x95ac9329ac4bc9b5ULL;
// An LZF string longer than this is refused (its stated length would be allocated).
constexpr uint64_t kMaxLzfExpanded = 512ull << 20;

}  // namespace

uint64_t Crc64(uint64_t crc, std::string_view data) {
  for (unsigned char byte : data) {
    crc ^= byte;
    for (int bit = 0; bit < 8; ++bit) crc = (crc & 1) ? (crc >> 1) ^ kJonesReflected : crc >> 1;
  }
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
