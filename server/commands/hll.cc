#include "server/commands/hll.h"

#include <cmath>
#include <cstring>

namespace rockcache::server::hll {
namespace {

constexpr int kIndexBits = 14;             // P
constexpr int kRunBits = 64 - kIndexBits;  // Q: hash bits left for the run of zeros
constexpr uint8_t kRegisterMax = 63;       // 6 bits
constexpr uint8_t kEncodingDense = 0;
constexpr uint8_t kEncodingSparse = 1;
constexpr size_t kEncodingOffset = 4;
constexpr size_t kCardOffset = 8;
constexpr uint64_t kHashSeed = 0xadc83b19ULL;
constexpr int kSparseValMax = 32;  // largest value a VAL opcode holds
constexpr int kSparseValMaxRun = 4;
constexpr int kSparseZeroMaxRun = 64;
constexpr int kSparseXZeroMaxRun = 16384;
constexpr double kAlphaInf = 0.721347520444481703680;  // 0.5 / ln(2)

// ---- sparse opcodes ----
inline bool IsZeroOp(uint8_t op) { return (op & 0xc0) == 0; }
inline bool IsXZeroOp(uint8_t op) { return (op & 0xc0) == 0x40; }
inline bool IsValOp(uint8_t op) { return (op & 0x80) != 0; }
inline int ZeroRun(uint8_t op) { return (op & 0x3f) + 1; }
inline int XZeroRun(uint8_t op, uint8_t next) { return (((op & 0x3f) << 8) | next) + 1; }
inline int ValValue(uint8_t op) { return ((op >> 2) & 0x1f) + 1; }
inline int ValRun(uint8_t op) { return (op & 0x3) + 1; }
inline uint8_t MakeVal(int value, int run) {
  return static_cast<uint8_t>(((value - 1) << 2) | (run - 1) | 0x80);
}
inline uint8_t MakeZero(int run) { return static_cast<uint8_t>(run - 1); }
inline void AppendXZero(std::string* seq, int run) {
  seq->push_back(static_cast<char>(((run - 1) >> 8) | 0x40));
  seq->push_back(static_cast<char>((run - 1) & 0xff));
}
// A run of zero registers as the shortest opcode (ZERO up to 64, else XZERO).
inline void AppendZeros(std::string* seq, int run) {
  if (run > kSparseZeroMaxRun) {
    AppendXZero(seq, run);
  } else {
    seq->push_back(static_cast<char>(MakeZero(run)));
  }
}

inline uint8_t ByteAt(const std::string_view s, size_t i) {
  return i < s.size() ? static_cast<uint8_t>(s[i]) : 0;  // past the end reads as 0, as an sds NUL
}

// ---- dense registers ----
// Register i occupies bits [6i, 6i+6) of the register bytes, low bits first.
uint8_t DenseGet(const uint8_t* regs, size_t size, size_t i) {
  size_t byte = i * 6 / 8;
  unsigned shift = static_cast<unsigned>(i * 6 & 7);
  unsigned b0 = regs[byte];
  unsigned b1 = byte + 1 < size ? regs[byte + 1] : 0;
  return static_cast<uint8_t>(((b0 >> shift) | (b1 << (8 - shift))) & kRegisterMax);
}

void DenseSet(uint8_t* regs, size_t size, size_t i, uint8_t value) {
  size_t byte = i * 6 / 8;
  unsigned shift = static_cast<unsigned>(i * 6 & 7);
  regs[byte] = static_cast<uint8_t>((regs[byte] & ~(kRegisterMax << shift)) | (value << shift));
  if (byte + 1 < size) {
    unsigned spill = 8 - shift;
    regs[byte + 1] =
        static_cast<uint8_t>((regs[byte + 1] & ~(kRegisterMax >> spill)) | (value >> spill));
  }
}

uint8_t* DenseRegisters(std::string* value) {
  return reinterpret_cast<uint8_t*>(&(*value)[kHeaderSize]);
}
const uint8_t* DenseRegisters(std::string_view value) {
  return reinterpret_cast<const uint8_t*>(value.data() + kHeaderSize);
}
constexpr size_t kDenseBytes = kDenseSize - kHeaderSize;

int DenseSetMax(std::string* value, size_t index, uint8_t count) {
  uint8_t* regs = DenseRegisters(value);
  if (count <= DenseGet(regs, kDenseBytes, index)) return 0;
  DenseSet(regs, kDenseBytes, index, count);
  return 1;
}

// The register an element lands in and its candidate value (the position of the first 1 bit
// above the index bits, counting from 1; at most Q + 1).
uint8_t PatternLength(std::string_view element, size_t* index) {
  uint64_t hash = MurmurHash64A(element.data(), element.size(), kHashSeed);
  *index = hash & (kRegisters - 1);
  hash >>= kIndexBits;
  hash |= uint64_t{1} << kRunBits;  // the loop ends by Q + 1
  uint8_t count = 1;
  for (uint64_t bit = 1; (hash & bit) == 0; bit <<= 1) ++count;
  return count;
}

// Histogram of register values; false when a sparse body does not cover exactly 16384 registers.
bool Histogram(std::string_view value, int* histo) {
  if (IsDense(value)) {
    const uint8_t* regs = DenseRegisters(value);
    for (size_t i = 0; i < kRegisters; ++i) ++histo[DenseGet(regs, kDenseBytes, i)];
    return true;
  }
  size_t idx = 0;
  for (size_t p = kHeaderSize; p < value.size();) {
    uint8_t op = ByteAt(value, p);
    if (IsZeroOp(op)) {
      idx += ZeroRun(op);
      histo[0] += ZeroRun(op);
      p += 1;
    } else if (IsXZeroOp(op)) {
      int run = XZeroRun(op, ByteAt(value, p + 1));
      idx += run;
      histo[0] += run;
      p += 2;
    } else {
      idx += ValRun(op);
      histo[ValValue(op)] += ValRun(op);
      p += 1;
    }
  }
  return idx == kRegisters;
}

double Sigma(double x) {
  if (x == 1.) return INFINITY;
  double z_prev;
  double y = 1;
  double z = x;
  do {
    x *= x;
    z_prev = z;
    z += x * y;
    y += y;
  } while (z_prev != z);
  return z;
}

double Tau(double x) {
  if (x == 0. || x == 1.) return 0.;
  double z_prev;
  double y = 1.0;
  double z = 1 - x;
  do {
    x = std::sqrt(x);
    z_prev = z;
    y *= 0.5;
    z -= std::pow(1 - x, 2) * y;
  } while (z_prev != z);
  return z / 3;
}

uint64_t Estimate(const int* histo) {
  const double m = kRegisters;
  double z = m * Tau((m - histo[kRunBits + 1]) / m);
  for (int j = kRunBits; j >= 1; --j) {
    z += histo[j];
    z *= 0.5;
  }
  z += m * Sigma(histo[0] / m);
  return static_cast<uint64_t>(std::llround(kAlphaInf * m * m / z));
}

// Sets a sparse register (the value must be sparse): edits the run-length code in place,
// splitting the opcode that covers `index`, then merges neighbouring VAL opcodes of equal value.
int SparseSet(std::string* value, size_t index_arg, uint8_t count) {
  const long index = static_cast<long>(index_arg);
  if (count > kSparseValMax) {
    if (!ToDense(value)) return -1;
    return DenseSetMax(value, index_arg, count);
  }
  std::string& s = *value;
  constexpr size_t kNone = std::string::npos;
  size_t p = kHeaderSize, end = s.size(), prev = kNone;
  long first = 0, span = 0;
  // Step 1: find the opcode covering `index`.
  while (p < end) {
    uint8_t op = ByteAt(s, p);
    size_t oplen = 1;
    if (IsZeroOp(op)) {
      span = ZeroRun(op);
    } else if (IsValOp(op)) {
      span = ValRun(op);
    } else {
      span = XZeroRun(op, ByteAt(s, p + 1));
      oplen = 2;
    }
    if (index <= first + span - 1) break;
    prev = p;
    p += oplen;
    first += span;
  }
  if (span == 0 || p >= end) return -1;

  const uint8_t op = ByteAt(s, p);
  const bool is_zero = IsZeroOp(op), is_xzero = IsXZeroOp(op), is_val = IsValOp(op);
  const long run = is_zero ? ZeroRun(op) : is_xzero ? XZeroRun(op, ByteAt(s, p + 1)) : ValRun(op);

  // Step 2: the trivial cases, then the general split.
  bool done = false;
  if (is_val) {
    if (ValValue(op) >= count) return 0;
    if (run == 1) {
      s[p] = static_cast<char>(MakeVal(count, 1));
      done = true;
    }
  }
  if (!done && is_zero && run == 1) {
    s[p] = static_cast<char>(MakeVal(count, 1));
    done = true;
  }
  if (!done) {
    std::string seq;
    const long last = first + span - 1;
    if (is_zero || is_xzero) {
      if (index != first) AppendZeros(&seq, static_cast<int>(index - first));
      seq.push_back(static_cast<char>(MakeVal(count, 1)));
      if (index != last) AppendZeros(&seq, static_cast<int>(last - index));
    } else {
      int current = ValValue(op);
      if (index != first) seq.push_back(static_cast<char>(MakeVal(current, index - first)));
      seq.push_back(static_cast<char>(MakeVal(count, 1)));
      if (index != last) seq.push_back(static_cast<char>(MakeVal(current, last - index)));
    }
    // Step 3: put the new sequence in place of the old opcode, unless it grows too big.
    size_t old_len = is_xzero ? 2 : 1;
    long delta = static_cast<long>(seq.size()) - static_cast<long>(old_len);
    if (delta > 0 && s.size() + static_cast<size_t>(delta) > kSparseMaxBytes) {
      if (!ToDense(value)) return -1;
      return DenseSetMax(value, index_arg, count);
    }
    s.replace(p, old_len, seq);
    end = s.size();
  }

  // Step 4: merge adjacent VAL opcodes of equal value (up to 5 opcodes from the previous one).
  p = prev != kNone ? prev : kHeaderSize;
  int scan = 5;
  while (p < end && scan--) {
    uint8_t cur = ByteAt(s, p);
    if (IsXZeroOp(cur)) {
      p += 2;
      continue;
    }
    if (IsZeroOp(cur)) {
      p += 1;
      continue;
    }
    if (p + 1 < end && IsValOp(ByteAt(s, p + 1))) {
      uint8_t nxt = ByteAt(s, p + 1);
      if (ValValue(cur) == ValValue(nxt)) {
        int len = ValRun(cur) + ValRun(nxt);
        if (len <= kSparseValMaxRun) {
          s[p + 1] = static_cast<char>(MakeVal(ValValue(cur), len));
          s.erase(p, 1);
          --end;
          continue;  // try to merge the merged opcode with the next one
        }
      }
    }
    p += 1;
  }
  InvalidateCachedCount(value);
  return 1;
}

}  // namespace

uint64_t MurmurHash64A(const void* key, size_t len, uint64_t seed) {
  const uint64_t m = 0xc6a4a7935bd1e995ULL;
  const int r = 47;
  uint64_t h = seed ^ (static_cast<uint64_t>(len) * m);
  const auto* data = static_cast<const uint8_t*>(key);
  const uint8_t* end = data + (len - (len & 7));
  for (; data != end; data += 8) {
    uint64_t k = 0;
    for (int i = 7; i >= 0; --i) k = (k << 8) | data[i];  // little endian, any host
    k *= m;
    k ^= k >> r;
    k *= m;
    h ^= k;
    h *= m;
  }
  size_t tail = len & 7;
  if (tail > 0) {
    for (size_t i = tail; i-- > 0;) h ^= static_cast<uint64_t>(data[i]) << (8 * i);
    h *= m;
  }
  h ^= h >> r;
  h *= m;
  h ^= h >> r;
  return h;
}

std::string NewSparse() {
  std::string s(kHeaderSize, '\0');
  std::memcpy(&s[0], "HYLL", 4);
  s[kEncodingOffset] = static_cast<char>(kEncodingSparse);
  for (size_t left = kRegisters; left > 0;) {
    int run = static_cast<int>(left < kSparseXZeroMaxRun ? left : kSparseXZeroMaxRun);
    AppendXZero(&s, run);
    left -= static_cast<size_t>(run);
  }
  return s;
}

bool LooksValid(std::string_view value) {
  if (value.size() < kHeaderSize || value.substr(0, 4) != "HYLL") return false;
  auto encoding = static_cast<uint8_t>(value[kEncodingOffset]);
  if (encoding > kEncodingSparse) return false;
  return encoding != kEncodingDense || value.size() == kDenseSize;
}

bool IsDense(std::string_view value) {
  return static_cast<uint8_t>(value[kEncodingOffset]) == kEncodingDense;
}

int Add(std::string* value, std::string_view element) {
  size_t index = 0;
  uint8_t count = PatternLength(element, &index);
  return SetRegister(value, index, count);
}

int SetRegister(std::string* value, size_t index, uint8_t count) {
  if (IsDense(*value)) return DenseSetMax(value, index, count);
  return SparseSet(value, index, count);
}

bool ToDense(std::string* value) {
  if (IsDense(*value)) return true;
  const std::string& sparse = *value;
  std::string dense(kDenseSize, '\0');
  std::memcpy(&dense[0], sparse.data(), kHeaderSize);  // magic and cached cardinality
  dense[kEncodingOffset] = static_cast<char>(kEncodingDense);
  uint8_t* regs = DenseRegisters(&dense);
  size_t idx = 0;
  for (size_t p = kHeaderSize; p < sparse.size();) {
    uint8_t op = ByteAt(sparse, p);
    if (IsZeroOp(op)) {
      idx += ZeroRun(op);
      p += 1;
    } else if (IsXZeroOp(op)) {
      idx += XZeroRun(op, ByteAt(sparse, p + 1));
      p += 2;
    } else {
      int run = ValRun(op);
      if (idx + run > kRegisters) break;
      for (int i = 0; i < run; ++i) DenseSet(regs, kDenseBytes, idx++, ValValue(op));
      p += 1;
    }
  }
  if (idx != kRegisters) return false;
  *value = std::move(dense);
  return true;
}

bool MergeInto(std::string_view value, uint8_t* max) {
  if (IsDense(value)) {
    const uint8_t* regs = DenseRegisters(value);
    for (size_t i = 0; i < kRegisters; ++i) {
      uint8_t v = DenseGet(regs, kDenseBytes, i);
      if (v > max[i]) max[i] = v;
    }
    return true;
  }
  size_t i = 0;
  for (size_t p = kHeaderSize; p < value.size();) {
    uint8_t op = ByteAt(value, p);
    if (IsZeroOp(op)) {
      i += ZeroRun(op);
      p += 1;
    } else if (IsXZeroOp(op)) {
      i += XZeroRun(op, ByteAt(value, p + 1));
      p += 2;
    } else {
      int run = ValRun(op);
      auto v = static_cast<uint8_t>(ValValue(op));
      if (i + run > kRegisters) break;
      for (int k = 0; k < run; ++k, ++i) {
        if (v > max[i]) max[i] = v;
      }
      p += 1;
    }
  }
  return i == kRegisters;
}

uint64_t CountRaw(const uint8_t* registers) {
  int histo[64] = {0};
  for (size_t i = 0; i < kRegisters; ++i) ++histo[registers[i] & 63];
  return Estimate(histo);
}

std::optional<uint64_t> Count(std::string_view value) {
  int histo[64] = {0};
  if (!Histogram(value, histo)) return std::nullopt;
  return Estimate(histo);
}

std::optional<uint64_t> CachedCount(std::string_view value) {
  if (ByteAt(value, kCardOffset + 7) & 0x80) return std::nullopt;
  uint64_t card = 0;
  for (int i = 7; i >= 0; --i) card = (card << 8) | ByteAt(value, kCardOffset + i);
  return card;
}

void SetCachedCount(std::string* value, uint64_t count) {
  for (int i = 0; i < 8; ++i) {
    (*value)[kCardOffset + i] = static_cast<char>((count >> (8 * i)) & 0xff);
  }
}

void InvalidateCachedCount(std::string* value) {
  char& top = (*value)[kCardOffset + 7];
  top = static_cast<char>(static_cast<uint8_t>(top) | 0x80);
}

}  // namespace rockcache::server::hll
