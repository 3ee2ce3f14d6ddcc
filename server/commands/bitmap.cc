// Bitmap commands on strings: SETBIT, GETBIT, BITCOUNT, BITPOS, BITOP, BITFIELD, BITFIELD_RO.
// Arguments are checked in the order Redis 7.0 checks them (bitops.c), so that a command with
// several faults reports the same error, and replies are Redis's to the byte.
//
// A bitmap is a plain string: reads take the value from the store, writes read it, change it in
// memory and write it back keeping its TTL (SETBIT/BITFIELD) or clearing it (BITOP's target).
// The writes are not kCacheAware: the executor erases their keys from the cache first. GETBIT
// answers from a cached string (kCacheRead, run to completion); the other reads go to storage. The
// largest string a write may create is bounded by proto-max-bulk-len (the offset check below), as
// Redis bounds it.
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>

#include "server/commands/args.h"
#include "server/commands/cache_access.h"
#include "server/commands/command.h"
#include "server/protocol/reply.h"
#include "server/pubsub/notify.h"
#include "server/settings.h"
#include "storage/store.h"

namespace rockcache::server {
namespace {

constexpr std::string_view kBadOffset = "ERR bit offset is not an integer or out of range";
constexpr std::string_view kBadType =
    "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 "
    "is.";

uint64_t MaxBulk(const CommandContext& ctx) {
  return ctx.settings().proto_max_bulk_len.load(std::memory_order_relaxed);
}

// Redis getBitOffsetFromArgument: "#n" (when `hash` and bits > 0) means n * bits; the offset in
// bytes must stay under proto-max-bulk-len.
bool ParseBitOffset(const CommandContext& ctx, const std::string& arg, bool hash, int bits,
                    uint64_t* offset) {
  bool use_hash = hash && bits > 0 && !arg.empty() && arg[0] == '#';
  int64_t value = 0;
  if (!storage::ParseInt64(std::string_view(arg).substr(use_hash ? 1 : 0), &value)) return false;
  if (use_hash && __builtin_mul_overflow(value, static_cast<int64_t>(bits), &value)) return false;
  if (value < 0 || (static_cast<uint64_t>(value) >> 3) >= MaxBulk(ctx)) return false;
  *offset = static_cast<uint64_t>(value);
  return true;
}

// The string at `key`: nullopt when absent; false (error appended) on WRONGTYPE or a store error.
bool ReadString(CommandContext& ctx, const std::string& key, std::optional<std::string>* value,
                std::string* out) {
  auto got = ctx.store->Get(key);
  if (!got.ok()) return AppendStatusError(out, got.status()), false;
  *value = std::move(*got);
  return true;
}

// Writes `value` back to `key`, keeping its TTL.
bool WriteKeepTtl(CommandContext& ctx, const std::string& key, const std::string& value,
                  std::string* out) {
  storage::SetOptions options;
  options.expiry.mode = storage::Expiry::Mode::kKeep;
  auto set = ctx.store->Set(key, value, options);
  if (!set.ok()) return AppendStatusError(out, set.status()), false;
  return true;
}

// SETBIT key offset value
void SetBit(CommandContext& ctx, Args& argv, std::string* out) {
  uint64_t offset = 0;
  if (!ParseBitOffset(ctx, argv[2], false, 0, &offset)) return AppendError(out, kBadOffset);
  if (argv[3] != "0" && argv[3] != "1") {
    return AppendError(out, "ERR bit is not an integer or out of range");
  }
  std::optional<std::string> value;
  if (!ReadString(ctx, argv[1], &value, out)) return;
  std::string bits = value.value_or("");
  size_t byte = offset >> 3;
  if (bits.size() < byte + 1) bits.resize(byte + 1, '\0');
  auto mask = static_cast<unsigned char>(1u << (7 - (offset & 7)));
  auto& cell = reinterpret_cast<unsigned char&>(bits[byte]);
  int old = (cell & mask) != 0 ? 1 : 0;
  if (argv[3] == "1") {
    cell |= mask;
  } else {
    cell &= static_cast<unsigned char>(~mask);
  }
  if (!value || bits != *value) {
    if (!WriteKeepTtl(ctx, argv[1], bits, out)) return;
  }
  NotifyKeyspaceEvent(ctx, kNotifyString, "setbit", argv[1]);  // as Redis, even when unchanged
  AppendInteger(out, old);
}

// GETBIT key offset
void GetBit(CommandContext& ctx, Args& argv, std::string* out) {
  uint64_t offset = 0;
  if (!ParseBitOffset(ctx, argv[2], false, 0, &offset)) return AppendError(out, kBadOffset);
  std::optional<std::string> value;
  if (!ReadString(ctx, argv[1], &value, out)) return;
  size_t byte = offset >> 3;
  if (!value || byte >= value->size()) return AppendInteger(out, 0);
  auto cell = static_cast<unsigned char>((*value)[byte]);
  AppendInteger(out, (cell >> (7 - (offset & 7))) & 1);
}

// Converts a BITCOUNT/BITPOS range (Redis's negative-index rules) to bit positions
// [*first, *last] within a string of `len` bytes; false when the range is empty.
bool BitRange(int64_t start, int64_t end, bool is_bit, int64_t len, int64_t* first, int64_t* last) {
  int64_t total = is_bit ? len * 8 : len;
  if (start < 0) start += total;
  if (end < 0) end += total;
  if (start < 0) start = 0;
  if (end < 0) end = 0;
  if (end >= total) end = total - 1;
  if (start > end) return false;
  *first = is_bit ? start : start * 8;
  *last = is_bit ? end : end * 8 + 7;
  return true;
}

int BitAt(const std::string& s, int64_t bit) {
  return (static_cast<unsigned char>(s[static_cast<size_t>(bit >> 3)]) >> (7 - (bit & 7))) & 1;
}

// Set bits in bit positions [first, last].
int64_t PopCount(const std::string& s, int64_t first, int64_t last) {
  int64_t count = 0;
  while (first <= last && (first & 7) != 0) count += BitAt(s, first++);
  while (first + 63 <= last) {
    uint64_t word = 0;
    std::memcpy(&word, s.data() + (first >> 3), 8);
    count += __builtin_popcountll(word);
    first += 64;
  }
  while (first + 7 <= last) {
    count += __builtin_popcount(static_cast<unsigned char>(s[static_cast<size_t>(first >> 3)]));
    first += 8;
  }
  while (first <= last) count += BitAt(s, first++);
  return count;
}

// The first bit position in [first, last] whose bit is `bit`, or -1.
int64_t FindBit(const std::string& s, int64_t first, int64_t last, int bit) {
  const unsigned char skip = bit ? 0x00 : 0xff;
  while (first <= last) {
    if ((first & 7) == 0 && first + 7 <= last &&
        static_cast<unsigned char>(s[static_cast<size_t>(first >> 3)]) == skip) {
      first += 8;
      continue;
    }
    if (BitAt(s, first) == bit) return first;
    ++first;
  }
  return -1;
}

// GETBIT from the cache alone (O(1)): a cached string, or a key the cache knows absent. A bad
// offset is left to the handler (which replies the error).
bool RtcGetBit(RtcContext& ctx, const Args& argv, std::string* out) {
  int64_t offset = 0;
  uint64_t max_bulk = ctx.settings().proto_max_bulk_len.load(std::memory_order_relaxed);
  if (!storage::ParseInt64(argv[2], &offset) || offset < 0 ||
      (static_cast<uint64_t>(offset) >> 3) >= max_bulk) {
    return false;
  }
  const auto byte = static_cast<size_t>(offset >> 3);
  return CacheLookup(
      ctx, argv[1],
      [&](const cache::Value& value, int64_t) {
        if (value.type != cache::Value::Type::kString) return out->append(kReplyWrongType), void();
        if (byte >= value.str.size()) return AppendInteger(out, 0);
        AppendInteger(out, (static_cast<unsigned char>(value.str[byte]) >> (7 - (offset & 7))) & 1);
      },
      [out] { AppendInteger(out, 0); });
}

// BITCOUNT key [start end [BYTE|BIT]]. As Redis 7.0, the key is looked up before the range is
// parsed (an absent key replies 0 whatever the arguments).
void BitCount(CommandContext& ctx, Args& argv, std::string* out) {
  std::optional<std::string> value;
  if (!ReadString(ctx, argv[1], &value, out)) return;
  if (!value) return AppendInteger(out, 0);
  int64_t start = 0, end = 0;
  bool is_bit = false;
  auto len = static_cast<int64_t>(value->size());
  if (argv.size() == 4 || argv.size() == 5) {
    if (!ParseInteger(argv[2], &start) || !ParseInteger(argv[3], &end)) {
      return out->append(kReplyNotInteger), void();
    }
    if (argv.size() == 5) {
      if (Is(argv[4], "BIT")) {
        is_bit = true;
      } else if (!Is(argv[4], "BYTE")) {
        return out->append(kReplySyntaxError), void();
      }
    }
    if (start < 0 && end < 0 && start > end) return AppendInteger(out, 0);
  } else if (argv.size() == 2) {
    start = 0;
    end = len - 1;
  } else {
    return out->append(kReplySyntaxError), void();
  }
  int64_t first = 0, last = 0;
  if (!BitRange(start, end, is_bit, len, &first, &last)) return AppendInteger(out, 0);
  AppendInteger(out, PopCount(*value, first, last));
}

// BITPOS key bit [start [end [BYTE|BIT]]]
void BitPos(CommandContext& ctx, Args& argv, std::string* out) {
  int64_t bit = 0;
  if (!ParseInteger(argv[2], &bit)) return out->append(kReplyNotInteger), void();
  if (bit != 0 && bit != 1) return AppendError(out, "ERR The bit argument must be 1 or 0.");
  std::optional<std::string> value;
  if (!ReadString(ctx, argv[1], &value, out)) return;
  if (!value) return AppendInteger(out, bit ? -1 : 0);
  auto len = static_cast<int64_t>(value->size());
  int64_t start = 0, end = len - 1;
  bool is_bit = false, end_given = false;
  if (argv.size() >= 4 && argv.size() <= 6) {
    if (!ParseInteger(argv[3], &start)) return out->append(kReplyNotInteger), void();
    if (argv.size() == 6) {
      if (Is(argv[5], "BIT")) {
        is_bit = true;
      } else if (!Is(argv[5], "BYTE")) {
        return out->append(kReplySyntaxError), void();
      }
    }
    if (argv.size() >= 5) {
      if (!ParseInteger(argv[4], &end)) return out->append(kReplyNotInteger), void();
      end_given = true;
    }
  } else if (argv.size() != 3) {
    return out->append(kReplySyntaxError), void();
  }
  int64_t first = 0, last = 0;
  if (!BitRange(start, end, is_bit, len, &first, &last)) return AppendInteger(out, -1);
  int64_t pos = FindBit(*value, first, last, static_cast<int>(bit));
  // Looking for a clear bit without an explicit end: the string reads as zero-padded on the
  // right, so the first bit past the range is clear.
  if (pos == -1 && bit == 0 && !end_given) pos = (last & ~int64_t{7}) + 8;
  AppendInteger(out, pos);
}

// BITOP AND|OR|XOR|NOT destkey key [key ...]
void BitOp(CommandContext& ctx, Args& argv, std::string* out) {
  enum { kAnd, kOr, kXor, kNot } op;
  if (Is(argv[1], "AND")) {
    op = kAnd;
  } else if (Is(argv[1], "OR")) {
    op = kOr;
  } else if (Is(argv[1], "XOR")) {
    op = kXor;
  } else if (Is(argv[1], "NOT")) {
    op = kNot;
  } else {
    return out->append(kReplySyntaxError), void();
  }
  if (op == kNot && argv.size() != 4) {
    return AppendError(out, "ERR BITOP NOT must be called with a single source key.");
  }
  std::vector<std::string> sources;
  size_t max_len = 0;
  for (size_t i = 3; i < argv.size(); ++i) {
    std::optional<std::string> value;
    if (!ReadString(ctx, argv[i], &value, out)) return;
    sources.push_back(value.value_or(""));
    max_len = std::max(max_len, sources.back().size());
  }
  if (max_len == 0) {
    auto deleted = ctx.store->Del({argv[2]});
    if (!deleted.ok()) return AppendStatusError(out, deleted.status());
    if (*deleted > 0) NotifyKeyspaceEvent(ctx, kNotifyGeneric, "del", argv[2]);
    return AppendInteger(out, 0);
  }
  std::string result(max_len, '\0');
  for (size_t j = 0; j < max_len; ++j) {
    auto byte_of = [&](size_t k) {
      return j < sources[k].size() ? static_cast<unsigned char>(sources[k][j]) : 0;
    };
    unsigned char output = byte_of(0);
    if (op == kNot) output = static_cast<unsigned char>(~output);
    for (size_t k = 1; k < sources.size(); ++k) {
      if (op == kAnd) output &= byte_of(k);
      if (op == kOr) output |= byte_of(k);
      if (op == kXor) output ^= byte_of(k);
    }
    result[j] = static_cast<char>(output);
  }
  auto set = ctx.store->Set(argv[2], result, storage::SetOptions{});
  if (!set.ok()) return AppendStatusError(out, set.status());
  NotifyKeyspaceEvent(ctx, kNotifyString, "set", argv[2]);
  AppendInteger(out, static_cast<int64_t>(max_len));
}

// ---- BITFIELD (Redis bitops.c, same integer arithmetic) ----

enum class Overflow { kWrap, kSat, kFail };

uint64_t GetUnsigned(const unsigned char* p, uint64_t offset, uint64_t bits) {
  uint64_t value = 0;
  for (uint64_t j = 0; j < bits; ++j, ++offset) {
    value = (value << 1) | ((p[offset >> 3] >> (7 - (offset & 7))) & 1);
  }
  return value;
}

int64_t GetSigned(const unsigned char* p, uint64_t offset, uint64_t bits) {
  uint64_t value = GetUnsigned(p, offset, bits);
  if (bits < 64 && (value & (uint64_t{1} << (bits - 1)))) value |= ~uint64_t{0} << bits;
  return static_cast<int64_t>(value);
}

void SetBits(unsigned char* p, uint64_t offset, uint64_t bits, uint64_t value) {
  for (uint64_t j = 0; j < bits; ++j, ++offset) {
    unsigned bit = (value & (uint64_t{1} << (bits - 1 - j))) != 0;
    unsigned shift = 7 - (offset & 7);
    p[offset >> 3] = static_cast<unsigned char>((p[offset >> 3] & ~(1u << shift)) | (bit << shift));
  }
}

// Redis checkUnsignedBitfieldOverflow: nonzero on overflow; *limit is what WRAP/SAT store.
int CheckUnsignedOverflow(uint64_t value, int64_t incr, uint64_t bits, Overflow ow,
                          uint64_t* limit) {
  uint64_t max = bits == 64 ? UINT64_MAX : (uint64_t{1} << bits) - 1;
  auto maxincr = static_cast<int64_t>(max - value);
  auto minincr = static_cast<int64_t>(uint64_t{0} - value);
  auto wrap = [&] {
    uint64_t mask = bits == 64 ? 0 : ~uint64_t{0} << bits;
    *limit = (value + static_cast<uint64_t>(incr)) & ~mask;
  };
  if (value > max || (incr > 0 && incr > maxincr)) {
    if (ow == Overflow::kWrap) wrap();
    if (ow == Overflow::kSat) *limit = max;
    return 1;
  }
  if (incr < 0 && incr < minincr) {
    if (ow == Overflow::kWrap) wrap();
    if (ow == Overflow::kSat) *limit = 0;
    return -1;
  }
  return 0;
}

// Redis checkSignedBitfieldOverflow.
int CheckSignedOverflow(int64_t value, int64_t incr, uint64_t bits, Overflow ow, int64_t* limit) {
  int64_t max = bits == 64 ? INT64_MAX : (int64_t{1} << (bits - 1)) - 1;
  int64_t min = -max - 1;
  auto maxincr = static_cast<int64_t>(static_cast<uint64_t>(max) - static_cast<uint64_t>(value));
  auto minincr = static_cast<int64_t>(static_cast<uint64_t>(min) - static_cast<uint64_t>(value));
  auto wrap = [&] {
    uint64_t msb = uint64_t{1} << (bits - 1);
    uint64_t c = static_cast<uint64_t>(value) + static_cast<uint64_t>(incr);
    if (bits < 64) {
      uint64_t mask = ~uint64_t{0} << bits;
      c = (c & msb) ? (c | mask) : (c & ~mask);
    }
    *limit = static_cast<int64_t>(c);
  };
  if (value > max || (bits != 64 && incr > maxincr) || (value >= 0 && incr > 0 && incr > maxincr)) {
    if (ow == Overflow::kWrap) wrap();
    if (ow == Overflow::kSat) *limit = max;
    return 1;
  }
  if (value < min || (bits != 64 && incr < minincr) || (value < 0 && incr < 0 && incr < minincr)) {
    if (ow == Overflow::kWrap) wrap();
    if (ow == Overflow::kSat) *limit = min;
    return -1;
  }
  return 0;
}

struct FieldOp {
  enum Code { kGet, kSet, kIncrBy } code;
  uint64_t offset;
  int64_t value;
  Overflow overflow;
  int bits;
  bool sign;
};

// "i8".."i64", "u1".."u63" (case-sensitive, as Redis).
bool ParseFieldType(const std::string& arg, bool* sign, int* bits) {
  if (arg.empty() || (arg[0] != 'i' && arg[0] != 'u')) return false;
  *sign = arg[0] == 'i';
  int64_t n = 0;
  if (!storage::ParseInt64(std::string_view(arg).substr(1), &n)) return false;
  if (n < 1 || (*sign && n > 64) || (!*sign && n > 63)) return false;
  *bits = static_cast<int>(n);
  return true;
}

void BitFieldGeneric(CommandContext& ctx, const Args& argv, bool readonly_command,
                     std::string* out) {
  std::vector<FieldOp> ops;
  Overflow overflow = Overflow::kWrap;
  bool readonly = true;
  uint64_t highest_write = 0;
  for (size_t j = 2; j < argv.size(); ++j) {
    size_t remaining = argv.size() - j - 1;
    FieldOp op{};
    if (Is(argv[j], "GET") && remaining >= 2) {
      op.code = FieldOp::kGet;
    } else if (Is(argv[j], "SET") && remaining >= 3) {
      op.code = FieldOp::kSet;
    } else if (Is(argv[j], "INCRBY") && remaining >= 3) {
      op.code = FieldOp::kIncrBy;
    } else if (Is(argv[j], "OVERFLOW") && remaining >= 1) {
      const std::string& type = argv[++j];
      if (Is(type, "WRAP")) {
        overflow = Overflow::kWrap;
      } else if (Is(type, "SAT")) {
        overflow = Overflow::kSat;
      } else if (Is(type, "FAIL")) {
        overflow = Overflow::kFail;
      } else {
        return AppendError(out, "ERR Invalid OVERFLOW type specified");
      }
      continue;
    } else {
      return out->append(kReplySyntaxError), void();
    }
    if (!ParseFieldType(argv[j + 1], &op.sign, &op.bits)) return AppendError(out, kBadType);
    if (!ParseBitOffset(ctx, argv[j + 2], true, op.bits, &op.offset)) {
      return AppendError(out, kBadOffset);
    }
    if (op.code != FieldOp::kGet) {
      readonly = false;
      highest_write = std::max(highest_write, op.offset + static_cast<uint64_t>(op.bits) - 1);
      if (!ParseInteger(argv[j + 3], &op.value)) return out->append(kReplyNotInteger), void();
    }
    op.overflow = overflow;
    ops.push_back(op);
    j += op.code == FieldOp::kGet ? 2 : 3;
  }
  if (!readonly && readonly_command) {
    return AppendError(out, "ERR BITFIELD_RO only supports the GET subcommand");
  }
  std::optional<std::string> value;
  if (!ReadString(ctx, argv[1], &value, out)) return;
  std::string bits = value.value_or("");
  if (!readonly && bits.size() < (highest_write >> 3) + 1) bits.resize((highest_write >> 3) + 1);
  std::string reply;
  AppendArrayHeader(&reply, static_cast<int64_t>(ops.size()));
  auto* p = reinterpret_cast<unsigned char*>(bits.data());
  for (const FieldOp& op : ops) {
    auto width = static_cast<uint64_t>(op.bits);
    if (op.code == FieldOp::kGet) {
      unsigned char buf[9] = {0};
      uint64_t byte = op.offset >> 3;
      for (uint64_t i = 0; i < 9 && byte + i < bits.size(); ++i) buf[i] = p[byte + i];
      uint64_t local = op.offset - byte * 8;
      AppendInteger(&reply, op.sign ? GetSigned(buf, local, width)
                                    : static_cast<int64_t>(GetUnsigned(buf, local, width)));
      continue;
    }
    int overflowed = 0;
    uint64_t store = 0;
    int64_t result = 0;
    if (op.sign) {
      int64_t old = GetSigned(p, op.offset, width), wrapped = 0, next = 0;
      if (op.code == FieldOp::kIncrBy) {
        overflowed = CheckSignedOverflow(old, op.value, width, op.overflow, &wrapped);
        next = overflowed ? wrapped : old + op.value;
        result = next;
      } else {
        next = op.value;
        overflowed = CheckSignedOverflow(next, 0, width, op.overflow, &wrapped);
        if (overflowed) next = wrapped;
        result = old;
      }
      store = static_cast<uint64_t>(next);
    } else {
      uint64_t old = GetUnsigned(p, op.offset, width), wrapped = 0, next = 0;
      if (op.code == FieldOp::kIncrBy) {
        next = old + static_cast<uint64_t>(op.value);
        overflowed = CheckUnsignedOverflow(old, op.value, width, op.overflow, &wrapped);
        if (overflowed) next = wrapped;
        result = static_cast<int64_t>(next);
      } else {
        next = static_cast<uint64_t>(op.value);
        overflowed = CheckUnsignedOverflow(next, 0, width, op.overflow, &wrapped);
        if (overflowed) next = wrapped;
        result = static_cast<int64_t>(old);
      }
      store = next;
    }
    if (overflowed && op.overflow == Overflow::kFail) {
      reply.append(NullBulkReply());
    } else {
      AppendInteger(&reply, result);
      SetBits(p, op.offset, width, store);
    }
  }
  // As Redis, a write form creates (or grows) the key even when every operation failed.
  if (!readonly && (!value || bits != *value)) {
    if (!WriteKeepTtl(ctx, argv[1], bits, out)) return;
    NotifyKeyspaceEvent(ctx, kNotifyString, "setbit", argv[1]);
  }
  out->append(reply);
}

void BitField(CommandContext& ctx, Args& argv, std::string* out) {
  BitFieldGeneric(ctx, argv, false, out);
}

void BitFieldRo(CommandContext& ctx, Args& argv, std::string* out) {
  BitFieldGeneric(ctx, argv, true, out);
}

}  // namespace

// clang-format off
const std::vector<CommandSpec> kBitmapCommands = {
    {"setbit", 4, kWrite, 1, 1, 1, SetBit},
    {"getbit", 3, kReadOnly | kFast | kCacheRead | kStringRead, 1, 1, 1, GetBit, RtcGetBit},
    {"bitcount", -2, kReadOnly, 1, 1, 1, BitCount},
    {"bitpos", -3, kReadOnly, 1, 1, 1, BitPos},
    {"bitop", -4, kWrite, 2, -1, 1, BitOp},
    {"bitfield", -2, kWrite, 1, 1, 1, BitField},
    {"bitfield_ro", -2, kReadOnly | kFast, 1, 1, 1, BitFieldRo},
};
// clang-format on

}  // namespace rockcache::server
