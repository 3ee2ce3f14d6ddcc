// Argument parsing shared by the stream commands (stream.cc, stream_read.cc, stream_group.cc):
// ids as Redis 7.0's t_stream.c parses them, and how their entries are written in replies.
// Pure, any thread.
#pragma once

#include <cerrno>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "server/protocol/reply.h"
#include "storage/numbers.h"
#include "storage/stream_types.h"

namespace rockcache::server {

inline constexpr std::string_view kInvalidId =
    "ERR Invalid stream ID specified as stream command argument";

// Redis's string2ull: a strict integer that is not negative, or else what strtoull takes whole.
inline bool String2Ull(const char* s, uint64_t* value) {
  int64_t ll = 0;
  if (storage::ParseInt64(s, &ll)) {
    if (ll < 0) return false;
    *value = static_cast<uint64_t>(ll);
    return true;
  }
  errno = 0;
  char* end = nullptr;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno == EINVAL || errno == ERANGE || !(*s != '\0' && *end == '\0')) return false;
  *value = v;
  return true;
}

// Redis's streamGenericParseIDOrReply: "<ms>[-<seq>]" (a missing seq is `missing_seq`), "-" and
// "+" unless `strict`. `seq_given` non-null allows XADD's "<ms>-*" (then false).
inline bool ParseId(std::string_view arg, bool strict, uint64_t missing_seq, storage::StreamId* id,
                    bool* seq_given = nullptr) {
  if (arg.size() > 127) return false;
  std::string buf(arg.substr(0, arg.find('\0')));  // C string semantics, as Redis
  if (strict && (buf == "-" || buf == "+")) return false;
  if (seq_given != nullptr) *seq_given = true;
  if (buf == "-") return *id = storage::StreamId::Min(), true;
  if (buf == "+") return *id = storage::StreamId::Max(), true;
  size_t dash = buf.find('-');
  uint64_t ms = 0, seq = missing_seq;
  if (!String2Ull(buf.substr(0, dash).c_str(), &ms)) return false;
  if (dash != std::string::npos) {
    std::string rest = buf.substr(dash + 1);
    if (seq_given != nullptr && rest == "*") {
      seq = 0;
      *seq_given = false;
    } else if (!String2Ull(rest.c_str(), &seq)) {
      return false;
    }
  }
  *id = storage::StreamId{ms, seq};
  return true;
}

// XRANGE's / XPENDING's interval ends: "(" + strict id is exclusive.
inline bool ParseIntervalId(const std::string& arg, uint64_t missing_seq, storage::StreamId* id,
                            bool* exclusive) {
  *exclusive = arg.size() > 1 && arg[0] == '(';
  if (*exclusive) return ParseId(std::string_view(arg).substr(1), true, missing_seq, id);
  return ParseId(arg, false, missing_seq, id);
}

// One entry as Redis writes it: [id, [field, value, ...]], or [id, nil] for a pending entry whose
// stream entry was deleted.
inline void AppendStreamEntry(std::string* out, const storage::StreamEntry& entry) {
  AppendArrayHeader(out, 2);
  AppendBulk(out, entry.id.ToString());
  if (entry.deleted) return AppendNullArray(out);
  AppendArrayHeader(out, static_cast<int64_t>(entry.fields.size() * 2));
  for (const auto& [field, value] : entry.fields) {
    AppendBulk(out, field);
    AppendBulk(out, value);
  }
}

inline void AppendStreamEntries(std::string* out,
                                const std::vector<storage::StreamEntry>& entries) {
  AppendArrayHeader(out, static_cast<int64_t>(entries.size()));
  for (const auto& entry : entries) AppendStreamEntry(out, entry);
}

}  // namespace rockcache::server
