// Redis's listpack (listpack.c's format, as DUMP payloads carry it for hashes, sorted sets,
// quicklist nodes and stream nodes): a writer that encodes values exactly as lpAppend does, and
// a validating decoder. Pure, any thread.
//
// Format: [total bytes u32 LE][count u16 LE, 65535 = unknown] entries [0xFF]; an entry is its
// encoding byte(s), data, then its "backlen" (the encoding + data size, 7 bits per byte).
//
// Decoding never reads past its input and allocates at most one PackedValue (24 bytes) per entry
// found, every entry taking at least 2 bytes of input: O(input size), never O(a stated count).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace rockcache::server::rdb {

// One value of a listpack or ziplist: an integer, or a string (a view into the input).
struct PackedValue {
  bool is_int = false;
  int64_t number = 0;
  std::string_view text;
  // The value as Redis returns it: the string, or the integer in decimal.
  std::string ToString() const { return is_int ? std::to_string(number) : std::string(text); }
};

class ListpackWriter {
 public:
  // Appends `value` as lpAppend does: as an integer when it is one (ParseStrictInt64), else as
  // a string.
  void Append(std::string_view value);
  void AppendInt(int64_t value);
  // Entries so far, and the listpack's size once finished (lpBytes).
  uint32_t count() const { return count_; }
  size_t bytes() const { return body_.size() + 7; }
  // The listpack: header, entries, end byte.
  std::string Finish() const;

 private:
  void AppendString(std::string_view value);
  std::string body_;
  uint32_t count_ = 0;
};

// Decodes a whole listpack into *out (appended). False when anything is malformed: sizes that do
// not add up to the header's total, a backlen that disagrees with its entry, a count that
// disagrees with the header's (unless 65535), a missing end byte, or more than `max_entries`.
bool DecodeListpack(std::string_view lp, std::vector<PackedValue>* out,
                    uint64_t max_entries = UINT64_MAX);

}  // namespace rockcache::server::rdb
