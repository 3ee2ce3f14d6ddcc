#include "storage/encoding.h"

#include <algorithm>
#include <cassert>
#include <cstring>

namespace rockcache::storage {

std::string EncodeMeta(const Meta& meta) {
  std::string out;
  EncodeMetaInto(meta, &out);
  return out;
}

void EncodeMetaInto(const Meta& meta, std::string* out_ptr) {
  std::string& out = *out_ptr;
  // The fixed part (header, and a list's head and tail) is built on the stack and copied once.
  char fixed[kMetaHeaderSize + 16];
  char* p = fixed;
  *p++ = static_cast<char>(meta.type);
  p = StoreFixed64BE(p, meta.version);
  p = StoreFixed64BE(p, static_cast<uint64_t>(meta.expire_at_ms));
  p = StoreFixed64BE(p, meta.count);
  if (meta.type == MetaType::kList) {
    p = StoreFixed64BE(p, meta.head);
    p = StoreFixed64BE(p, meta.tail);
  }
  out.reserve(kMetaHeaderSize + (meta.type == MetaType::kList ? 16 : meta.value.size()));
  out.assign(fixed, static_cast<size_t>(p - fixed));
  if (meta.type == MetaType::kString) {
    out.append(meta.value);
  } else if (meta.type == MetaType::kStream) {
    out.append(EncodeStreamId(meta.last_id));
    out.append(EncodeStreamId(meta.first_id));
    out.append(EncodeStreamId(meta.top_id));
    PutFixed64BE(&out, meta.entries_added);
    out.append(EncodeStreamId(meta.max_deleted_id));
    PutFixed64BE(&out, meta.next_group_id);
    PutFixed64BE(&out, meta.groups);
  } else if (meta.type != MetaType::kList && (!meta.lo.empty() || meta.hi || meta.gap)) {
    PutFixed32BE(&out, static_cast<uint32_t>(meta.lo.size()));
    out.append(meta.lo);
    out.push_back(static_cast<char>((meta.hi ? 1 : 0) | (meta.gap ? 2 : 0)));
    PutFixed32BE(&out, static_cast<uint32_t>(meta.hi ? meta.hi->size() : 0));
    if (meta.hi) out.append(*meta.hi);
    if (meta.gap) {
      PutFixed32BE(&out, static_cast<uint32_t>(meta.gap->size()));
      out.append(*meta.gap);
      PutFixed32BE(&out, static_cast<uint32_t>(meta.gap_last.size()));
      out.append(meta.gap_last);
    }
  }
}

void Meta::CoverInHint(std::string_view sub) {
  if (gap && sub < *gap) {
    if (sub > gap_last) gap_last.assign(sub.data(), sub.size());  // the dead stretch shrinks
  } else if (!gap && sub < lo) {
    gap = lo;  // nothing live in (sub, old lo)
    gap_last.assign(sub.data(), sub.size());
  }
  if (sub < lo) lo.assign(sub.data(), sub.size());
  if (hi && sub >= *hi) hi = ImmediateSuccessor(sub);
}

void Meta::RaiseLo(std::string new_lo) {
  if (new_lo <= lo) return;
  lo = std::move(new_lo);
  if (gap && (lo > gap_last || *gap <= lo)) {  // nothing live below the gap any more
    if (lo < *gap) lo = *gap;
    gap.reset();
    gap_last.clear();
  }
}

std::string ImmediateSuccessor(std::string_view s) {
  std::string out(s);
  out.push_back('\0');
  return out;
}

bool DecodeMetaHeader(std::string_view bytes, Meta* meta) {
  if (bytes.size() < kMetaHeaderSize) return false;
  uint8_t type = static_cast<uint8_t>(bytes[0]);
  if (type < static_cast<uint8_t>(MetaType::kString) ||
      type > static_cast<uint8_t>(MetaType::kStream)) {
    return false;
  }
  meta->type = static_cast<MetaType>(type);
  meta->version = GetFixed64BE(bytes.data() + 1);
  meta->expire_at_ms = static_cast<int64_t>(GetFixed64BE(bytes.data() + 9));
  meta->count = GetFixed64BE(bytes.data() + 17);
  return true;
}

bool DecodeMeta(std::string_view bytes, Meta* meta) {
  if (!DecodeMetaHeader(bytes, meta)) return false;
  std::string_view rest = bytes.substr(kMetaHeaderSize);
  meta->value.clear();
  meta->head = meta->tail = kListInitialIndex;
  meta->lo.clear();
  meta->hi.reset();
  meta->gap.reset();
  meta->gap_last.clear();
  if (meta->type == MetaType::kString) {
    meta->value.assign(rest.data(), rest.size());
  } else if (meta->type == MetaType::kList) {
    if (rest.size() != 16) return false;
    meta->head = GetFixed64BE(rest.data());
    meta->tail = GetFixed64BE(rest.data() + 8);
    if (meta->tail - meta->head != meta->count) return false;
  } else if (meta->type == MetaType::kStream) {
    if (rest.size() != 48 && rest.size() != 48 + kStreamMetaTail) return false;
    meta->last_id = DecodeStreamId(rest.data());
    meta->first_id = DecodeStreamId(rest.data() + 16);
    meta->top_id = DecodeStreamId(rest.data() + 32);
    if (rest.size() == 48) {  // written before consumer groups: no deletions known
      meta->entries_added = meta->count;
      meta->max_deleted_id = StreamId::Min();
      meta->next_group_id = 1;
      meta->groups = 0;
    } else {
      const char* t = rest.data() + 48;
      meta->entries_added = GetFixed64BE(t);
      meta->max_deleted_id = DecodeStreamId(t + 8);
      meta->next_group_id = GetFixed64BE(t + 24);
      meta->groups = GetFixed64BE(t + 32);
    }
  } else if (!rest.empty()) {
    if (rest.size() < 4) return false;
    uint64_t lo_len = GetFixed32BE(rest.data());
    if (rest.size() < 4 + lo_len + 1 + 4) return false;
    meta->lo.assign(rest.data() + 4, lo_len);
    rest.remove_prefix(4 + lo_len);
    uint8_t flags = static_cast<uint8_t>(rest[0]);
    uint64_t hi_len = GetFixed32BE(rest.data() + 1);
    if (rest.size() < 1 + 4 + hi_len) return false;
    if (flags & 1) meta->hi = std::string(rest.data() + 5, hi_len);
    rest.remove_prefix(5 + hi_len);
    if (flags & 2) {
      std::string parts[2];
      for (auto& part : parts) {
        if (rest.size() < 4 || rest.size() < 4 + GetFixed32BE(rest.data())) return false;
        uint64_t len = GetFixed32BE(rest.data());
        part.assign(rest.data() + 4, len);
        rest.remove_prefix(4 + len);
      }
      meta->gap = std::move(parts[0]);
      meta->gap_last = std::move(parts[1]);
    }
    if (!rest.empty()) return false;
  }
  return true;
}

std::string DataPrefix(std::string_view key, uint64_t version) {
  std::string out;
  out.reserve(4 + key.size() + 8);
  PutFixed32BE(&out, static_cast<uint32_t>(key.size()));
  out.append(key.data(), key.size());
  PutFixed64BE(&out, version);
  return out;
}

std::string DataKey(std::string_view key, uint64_t version, std::string_view sub_key) {
  std::string out(DataKeySize(key, sub_key), '\0');
  WriteDataKey(out.data(), key, version, sub_key);
  return out;
}

void WriteDataKey(char* out, std::string_view key, uint64_t version, std::string_view sub_key) {
  // Big-endian stores as one byte swap and one copy each (x86-64 is little-endian).
  static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "WriteDataKey assumes little-endian");
  const uint32_t len = __builtin_bswap32(static_cast<uint32_t>(key.size()));
  std::memcpy(out, &len, 4);
  if (!key.empty()) std::memcpy(out + 4, key.data(), key.size());
  out += 4 + key.size();
  const uint64_t be_version = __builtin_bswap64(version);
  std::memcpy(out, &be_version, 8);
  if (!sub_key.empty()) std::memcpy(out + 8, sub_key.data(), sub_key.size());
}

bool ParseDataKey(std::string_view data_key, std::string_view* key, uint64_t* version,
                  std::string_view* sub_key) {
  if (data_key.size() < 4) return false;
  uint64_t len = GetFixed32BE(data_key.data());
  if (data_key.size() < 4 + len + 8) return false;
  *key = data_key.substr(4, len);
  *version = GetFixed64BE(data_key.data() + 4 + len);
  *sub_key = data_key.substr(4 + len + 8);
  return true;
}

std::string PrefixSuccessor(std::string_view prefix) {
  std::string out(prefix);
  while (!out.empty()) {
    unsigned char last = static_cast<unsigned char>(out.back());
    if (last != 0xff) {
      out.back() = static_cast<char>(last + 1);
      return out;
    }
    out.pop_back();
  }
  assert(false && "PrefixSuccessor of an all-0xff prefix");
  return out;
}

std::string EncodeListIndex(uint64_t index) {
  std::string out;
  PutFixed64BE(&out, index);
  return out;
}

std::string EncodeStreamId(StreamId id) {
  std::string out;
  out.reserve(16);
  PutFixed64BE(&out, id.ms);
  PutFixed64BE(&out, id.seq);
  return out;
}

StreamId DecodeStreamId(const char* p) { return StreamId{GetFixed64BE(p), GetFixed64BE(p + 8)}; }

std::string EncodeStreamFields(
    const std::vector<std::pair<std::string_view, std::string_view>>& fv) {
  std::string out;
  PutFixed32BE(&out, static_cast<uint32_t>(fv.size()));
  for (const auto& [f, v] : fv) {
    PutFixed32BE(&out, static_cast<uint32_t>(f.size()));
    out.append(f.data(), f.size());
    PutFixed32BE(&out, static_cast<uint32_t>(v.size()));
    out.append(v.data(), v.size());
  }
  return out;
}

bool DecodeStreamFields(std::string_view bytes,
                        std::vector<std::pair<std::string, std::string>>* out) {
  out->clear();
  if (bytes.size() < 4) return false;
  uint64_t n = GetFixed32BE(bytes.data());
  bytes.remove_prefix(4);
  auto take = [&](std::string* dst) {
    if (bytes.size() < 4) return false;
    uint64_t len = GetFixed32BE(bytes.data());
    if (bytes.size() < 4 + len) return false;
    dst->assign(bytes.data() + 4, len);
    bytes.remove_prefix(4 + len);
    return true;
  };
  out->reserve(std::min<uint64_t>(n, bytes.size() / 8));
  for (uint64_t i = 0; i < n; ++i) {
    auto& pair = out->emplace_back();
    if (!take(&pair.first) || !take(&pair.second)) return false;
  }
  return bytes.empty();
}

std::string EncodeScore(double score) {
  assert(score == score);
  if (score == 0) score = 0.0;  // -0.0 -> +0.0
  uint64_t bits;
  std::memcpy(&bits, &score, sizeof(bits));
  // Negative numbers: flip every bit (larger magnitude sorts first); others: set the sign bit.
  bits = (bits & (1ull << 63)) ? ~bits : bits | (1ull << 63);
  std::string out;
  PutFixed64BE(&out, bits);
  return out;
}

double DecodeScore(const char* p) {
  uint64_t bits = GetFixed64BE(p);
  bits = (bits & (1ull << 63)) ? bits & ~(1ull << 63) : ~bits;
  double score;
  std::memcpy(&score, &bits, sizeof(score));
  return score;
}

std::string ScoreIndexSubKey(double score, std::string_view member) {
  std::string out = EncodeScore(score);
  out.append(member.data(), member.size());
  return out;
}

bool SameMeta(const Meta& a, const Meta& b) {
  return a.type == b.type && a.version == b.version && a.expire_at_ms == b.expire_at_ms &&
         a.count == b.count && a.head == b.head && a.tail == b.tail && a.lo == b.lo &&
         a.hi == b.hi && a.gap == b.gap && a.gap_last == b.gap_last && a.value == b.value &&
         a.last_id == b.last_id && a.first_id == b.first_id && a.top_id == b.top_id &&
         a.entries_added == b.entries_added && a.max_deleted_id == b.max_deleted_id &&
         a.next_group_id == b.next_group_id && a.groups == b.groups;
}

}  // namespace rockcache::storage
