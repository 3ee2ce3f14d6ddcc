// cache::Value — what the cache holds for one key: a string, a whole hash, or the knowledge that
// the key does not exist (a negative entry, kAbsent: no payload).
//
// A hash is cached whole or not at all, with its fields sorted by field name in binary
// (memcmp) order and unique — the order RocksDB's bytewise comparator gives storage's hash
// fields — so HGETALL/HKEYS replies built from the cache list fields exactly as a reply built
// from storage would. FindField is a binary search.
//
// Thread-safety: a plain value. The copy inside the cache is only touched under its shard lock
// (see Cache::Visit and Cache::Update).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rockcache::cache {

struct Value {
  enum class Type : uint8_t { kString, kHash, kAbsent };
  using Field = std::pair<std::string, std::string>;  // (name, value)

  Type type = Type::kString;
  std::string str;            // kString: the value
  std::vector<Field> fields;  // kHash: sorted by .first (binary compare), names unique

  static Value String(std::string s);
  // A negative entry: storage was read under the key's stripe and holds no such key.
  static Value Absent();
  // REQUIRES: sorted_fields is sorted by name and has no duplicate name (asserted in debug
  // builds). Use HashFromUnsorted when the order is not known.
  static Value Hash(std::vector<Field> sorted_fields);
  // Sorts the fields; when a name repeats, the last occurrence wins (as HSET k f a f b).
  static Value HashFromUnsorted(std::vector<Field> fields);

  bool is_string() const { return type == Type::kString; }
  bool is_hash() const { return type == Type::kHash; }
  bool is_absent() const { return type == Type::kAbsent; }

  // kHash: the field's value, or nullptr when absent. O(log n).
  const std::string* FindField(std::string_view name) const;
  std::string* FindField(std::string_view name);
  // kHash: inserts the field in order or replaces its value (HSET). Returns true if the field
  // is new. O(n) for an insert (vector shift), O(log n) for a replace.
  bool SetField(std::string_view name, std::string_view value);
  // kHash: removes the field (HDEL). Returns whether it was present.
  bool EraseField(std::string_view name);

  // kHash: fields sorted and unique. Always true for a kString.
  bool IsWellFormed() const;

  friend bool operator==(const Value& a, const Value& b) {
    return a.type == b.type && a.str == b.str && a.fields == b.fields;
  }
  friend bool operator!=(const Value& a, const Value& b) { return !(a == b); }
};

}  // namespace rockcache::cache
