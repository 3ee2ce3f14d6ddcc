// Pieces of Redis's RDB format that DUMP / RESTORE payloads are made of (FUNCTION DUMP today,
// key DUMP next): length encoding, strings (raw, integer-encoded, LZF-compressed), and the
// payload footer (RDB version + CRC-64/Jones). Written from Redis's documented format
// (rdb.h/rdb.c); pure functions, any thread. Decoding never reads past its input and never
// allocates more than the input could describe (an LZF string's stated length is capped).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace rockcache::server::rdb {

// The RDB version this server writes in DUMP payloads (Redis 7.0's) and the newest it reads.
inline constexpr uint16_t kRdbVersion = 10;
inline constexpr uint8_t kOpcodeFunction2 = 245;      // a function library: its code
inline constexpr uint8_t kOpcodeFunctionPreGa = 246;  // Redis 7.0 release candidates' format

// CRC-64/Jones as Redis computes it (reflected, init 0): crc64("123456789") = 0xe9c6d914c4b8d9ca.
uint64_t Crc64(uint64_t crc, std::string_view data);

// Appends an RDB length.
void AppendLength(std::string* out, uint64_t length);
// Appends a string as Redis's rdbSaveRawString without compression: length + bytes.
void AppendString(std::string* out, std::string_view value);
// Appends a string as Redis 7.0's rdbSaveRawString with rdbcompression on (what DUMP writes): a
// string of at most 11 bytes that is an integer's canonical text and fits 32 bits as an int
// encoding; one of more than 20 bytes that LzfCompress shrinks by at least 4 bytes LZF-encoded;
// anything else as length + bytes.
void AppendRdbString(std::string* out, std::string_view value);
// Appends a double as RDB's binary double (8 bytes, little endian).
void AppendBinaryDouble(std::string* out, double value);
// Appends a little-endian integer of `bytes` bytes.
void AppendLittleEndian(std::string* out, uint64_t value, int bytes);
// The little-endian integer of `bytes` (at most 8) bytes at `p`.
inline uint64_t LittleEndian(const unsigned char* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= uint64_t{p[i]} << (8 * i);
  return v;
}

// Appends the footer of a DUMP payload: RDB version (2 bytes, little endian) and the CRC-64 of
// everything before it (8 bytes, little endian).
void AppendFooter(std::string* payload);
// Checks a payload's footer: true when its version is one this server reads and its checksum
// matches; *body is then the payload without the footer.
bool CheckFooter(std::string_view payload, std::string_view* body);

// A cursor over RDB bytes. Each Read* returns false on truncated or malformed input (and then
// leaves the cursor where it stopped).
class Reader {
 public:
  explicit Reader(std::string_view data) : data_(data) {}
  bool done() const { return pos_ >= data_.size(); }
  bool ReadByte(uint8_t* byte);
  // A length, or an encoded-string marker (*encoded true, *length the encoding type).
  bool ReadLength(uint64_t* length, bool* encoded);
  // A string in any of its encodings (raw, int8/16/32, LZF).
  bool ReadString(std::string* value);
  // `n` raw bytes (a view into the input).
  bool ReadRaw(uint64_t n, std::string_view* bytes);
  // A little-endian unsigned integer of `bytes` bytes (RDB's millisecond times: 8).
  bool ReadLittleEndian(int bytes, uint64_t* value);
  // RDB_TYPE_ZSET_2's binary double / RDB_TYPE_ZSET's text double (253 nan, 254 inf, 255 -inf).
  bool ReadBinaryDouble(double* value);
  bool ReadTextDouble(double* value);
  // Bytes not read yet: every length read from the input is checked against this before anything
  // of that length is allocated.
  size_t remaining() const { return data_.size() - pos_; }
  // Bytes read so far.
  size_t position() const { return pos_; }

 private:
  std::string_view data_;
  size_t pos_ = 0;
};

// LZF decompression (the format of Redis's lzf_c.c): false when `compressed` is malformed or
// does not expand to exactly `expected` bytes. An `expected` no LZF input of that size can
// reach (more than kLzfMaxExpansion times it) is refused before anything is allocated.
bool LzfDecompress(std::string_view compressed, size_t expected, std::string* out);
// The most an LZF input can expand: a 3-byte back reference copies 264 bytes.
inline constexpr size_t kLzfMaxExpansion = 88;
// LZF compression as Redis 7.0's lzf_compress (liblzf 3.6: HLOG 16, VERY_FAST), with its hash
// table starting empty: the same bytes as redis-server for the same input, except where
// redis-server's table, left uninitialized on its stack, happens to offer an older match.
// Writes the compressed form to *out and returns its size, or returns 0 when it would not fit in
// `out_limit` bytes (the input is then stored uncompressed).
size_t LzfCompress(std::string_view input, size_t out_limit, std::string* out);
// Redis's string2ll: `text` is the canonical decimal form of an int64 (no sign on 0, no leading
// zeros, no spaces, at most 20 characters).
bool ParseStrictInt64(std::string_view text, int64_t* value);

}  // namespace rockcache::server::rdb
