// cache::Value — what the cache holds for one key: a string, a whole hash, the head of a list, or
// the knowledge that the key does not exist (a negative entry, kAbsent: no payload).
//
// A hash is cached whole or not at all, with its fields sorted by field name in binary
// (memcmp) order and unique — the order RocksDB's bytewise comparator gives storage's hash
// fields — so HGETALL/HKEYS replies built from the cache list fields exactly as a reply built
// from storage would. FindField is a binary search.
//
// A list is cached as its head (kList, ListHead): its first elements, from index 0 on, and its
// length. LRANGE / LINDEX of indexes inside the head and LLEN are answered from it; the rest of
// the list stays in storage only. The head lives behind a pointer (ListHeadBox), so that strings
// and hashes, most of the cache, do not carry it in every entry.
//
// Thread-safety: a plain value. The copy inside the cache is only touched under its shard lock
// (see Cache::Visit and Cache::Update).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rockcache::cache {

// std::string keeps up to this many bytes inside itself (libstdc++); a longer one has a heap block.
inline constexpr size_t kInlineStringCapacity = 15;

// kList: the first elements of a list (elements[0] is index 0, the LEFT end) and the list's length.
// Well formed when 0 < elements.size() <= length. Edit `elements` only through the methods below,
// which keep the byte figures the cache charges (Cache::Charge) without walking the head.
struct ListHead {
  uint64_t length = 0;
  std::deque<std::string> elements;
  uint64_t element_bytes = 0;  // sum of the elements' sizes
  uint64_t heap_elements = 0;  // elements longer than kInlineStringCapacity

  // A head of `head` (figures computed: O(n)).
  static ListHead Of(std::deque<std::string> head, uint64_t length);
  void PushFront(std::string_view element);
  void PushBack(std::string_view element);
  void PopFront();  // REQUIRES: !elements.empty()
  void PopBack();   // REQUIRES: !elements.empty()

  friend bool operator==(const ListHead& a, const ListHead& b) {
    return a.length == b.length && a.elements == b.elements;
  }
};

// Owns a ListHead or nothing, and copies it deeply (a Value is copied as a whole).
class ListHeadBox {
 public:
  ListHeadBox() = default;
  explicit ListHeadBox(ListHead head) : head_(std::make_unique<ListHead>(std::move(head))) {}
  ListHeadBox(const ListHeadBox& other)
      : head_(other.head_ ? std::make_unique<ListHead>(*other.head_) : nullptr) {}
  ListHeadBox& operator=(const ListHeadBox& other) {
    if (this != &other) head_ = other.head_ ? std::make_unique<ListHead>(*other.head_) : nullptr;
    return *this;
  }
  ListHeadBox(ListHeadBox&&) noexcept = default;
  ListHeadBox& operator=(ListHeadBox&&) noexcept = default;

  explicit operator bool() const { return head_ != nullptr; }
  ListHead& operator*() const { return *head_; }
  ListHead* operator->() const { return head_.get(); }

  friend bool operator==(const ListHeadBox& a, const ListHeadBox& b) {
    return a.head_ == nullptr ? b.head_ == nullptr : b.head_ != nullptr && *a.head_ == *b.head_;
  }

 private:
  std::unique_ptr<ListHead> head_;
};

struct Value {
  enum class Type : uint8_t { kString, kHash, kAbsent, kList };
  using Field = std::pair<std::string, std::string>;  // (name, value)

  Type type = Type::kString;
  std::string str;            // kString: the value
  std::vector<Field> fields;  // kHash: sorted by .first (binary compare), names unique
  ListHeadBox list;           // kList: the head; empty for every other type

  static Value String(std::string s);
  // A negative entry: storage was read under the key's stripe and holds no such key.
  static Value Absent();
  // REQUIRES: sorted_fields is sorted by name and has no duplicate name (asserted in debug
  // builds). Use HashFromUnsorted when the order is not known.
  static Value Hash(std::vector<Field> sorted_fields);
  // Sorts the fields; when a name repeats, the last occurrence wins (as HSET k f a f b).
  static Value HashFromUnsorted(std::vector<Field> fields);
  // REQUIRES: 0 < head.size() <= length (asserted in debug builds).
  static Value List(std::deque<std::string> head, uint64_t length);

  bool is_string() const { return type == Type::kString; }
  bool is_hash() const { return type == Type::kHash; }
  bool is_absent() const { return type == Type::kAbsent; }
  bool is_list() const { return type == Type::kList; }

  // kHash: the field's value, or nullptr when absent. O(log n).
  const std::string* FindField(std::string_view name) const;
  std::string* FindField(std::string_view name);
  // kHash: inserts the field in order or replaces its value (HSET). Returns true if the field
  // is new. O(n) for an insert (vector shift), O(log n) for a replace.
  bool SetField(std::string_view name, std::string_view value);
  // kHash: removes the field (HDEL). Returns whether it was present.
  bool EraseField(std::string_view name);

  // kHash: fields sorted and unique; kList: a head of 1..length elements. Always true for a
  // kString or kAbsent.
  bool IsWellFormed() const;

  friend bool operator==(const Value& a, const Value& b) {
    return a.type == b.type && a.str == b.str && a.fields == b.fields && a.list == b.list;
  }
  friend bool operator!=(const Value& a, const Value& b) { return !(a == b); }
};

}  // namespace rockcache::cache
