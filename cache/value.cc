#include "cache/value.h"

#include <algorithm>
#include <cassert>

namespace rockcache::cache {

namespace {

// std::string compares through char_traits<char>, which orders bytes as unsigned char (memcmp),
// the same order as RocksDB's bytewise comparator.
bool NameLess(const Value::Field& f, std::string_view name) {
  return std::string_view(f.first) < name;
}

}  // namespace

Value Value::String(std::string s) {
  Value v;
  v.type = Type::kString;
  v.str = std::move(s);
  return v;
}

Value Value::Absent() {
  Value v;
  v.type = Type::kAbsent;
  return v;
}

Value Value::Hash(std::vector<Field> sorted_fields) {
  Value v;
  v.type = Type::kHash;
  v.fields = std::move(sorted_fields);
  assert(v.IsWellFormed());
  return v;
}

ListHead ListHead::Of(std::deque<std::string> head, uint64_t length) {
  ListHead h;
  h.length = length;
  h.elements = std::move(head);
  for (const auto& element : h.elements) {
    h.element_bytes += element.size();
    if (element.size() > kInlineStringCapacity) ++h.heap_elements;
  }
  return h;
}

void ListHead::PushFront(std::string_view element) {
  elements.emplace_front(element);
  element_bytes += element.size();
  if (element.size() > kInlineStringCapacity) ++heap_elements;
}

void ListHead::PushBack(std::string_view element) {
  elements.emplace_back(element);
  element_bytes += element.size();
  if (element.size() > kInlineStringCapacity) ++heap_elements;
}

void ListHead::PopFront() {
  element_bytes -= elements.front().size();
  if (elements.front().size() > kInlineStringCapacity) --heap_elements;
  elements.pop_front();
}

void ListHead::PopBack() {
  element_bytes -= elements.back().size();
  if (elements.back().size() > kInlineStringCapacity) --heap_elements;
  elements.pop_back();
}

Value Value::List(std::deque<std::string> head, uint64_t length) {
  Value v;
  v.type = Type::kList;
  v.list = ListHeadBox(ListHead::Of(std::move(head), length));
  assert(v.IsWellFormed());
  return v;
}

Value Value::HashFromUnsorted(std::vector<Field> fields) {
  // Stable, so that among equal names the later occurrence stays later; keep that one.
  std::stable_sort(fields.begin(), fields.end(),
                   [](const Field& a, const Field& b) { return a.first < b.first; });
  std::vector<Field> unique;
  unique.reserve(fields.size());
  for (auto& f : fields) {
    if (!unique.empty() && unique.back().first == f.first) {
      unique.back().second = std::move(f.second);
    } else {
      unique.push_back(std::move(f));
    }
  }
  return Hash(std::move(unique));
}

const std::string* Value::FindField(std::string_view name) const {
  auto it = std::lower_bound(fields.begin(), fields.end(), name, NameLess);
  if (it == fields.end() || it->first != name) return nullptr;
  return &it->second;
}

std::string* Value::FindField(std::string_view name) {
  return const_cast<std::string*>(static_cast<const Value*>(this)->FindField(name));
}

bool Value::SetField(std::string_view name, std::string_view value) {
  assert(is_hash());
  auto it = std::lower_bound(fields.begin(), fields.end(), name, NameLess);
  if (it != fields.end() && it->first == name) {
    it->second.assign(value);
    return false;
  }
  fields.emplace(it, std::string(name), std::string(value));
  return true;
}

bool Value::EraseField(std::string_view name) {
  assert(is_hash());
  auto it = std::lower_bound(fields.begin(), fields.end(), name, NameLess);
  if (it == fields.end() || it->first != name) return false;
  fields.erase(it);
  return true;
}

bool Value::IsWellFormed() const {
  if (type == Type::kList) {
    return list && !list->elements.empty() && list->elements.size() <= list->length;
  }
  if (type != Type::kHash) return true;
  for (size_t i = 1; i < fields.size(); ++i) {
    if (!(fields[i - 1].first < fields[i].first)) return false;
  }
  return true;
}

}  // namespace rockcache::cache
