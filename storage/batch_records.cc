#include "storage/batch_records.h"

#include <algorithm>
#include <vector>

namespace rockcache::storage::batch_records {

bool SortedByKey(std::string_view rep, std::string* out) {
  struct Entry {
    uint32_t cf_id;
    std::string_view key;
    size_t start, end;
  };
  const auto before = [](const Entry& a, const Entry& b) {
    return a.cf_id != b.cf_id ? a.cf_id < b.cf_id : a.key < b.key;
  };
  thread_local std::vector<Entry> entries;  // kept: a write group flushes many batches
  entries.clear();
  bool in_order = true;
  const bool readable = ForEachRecord(rep, [&](const Record& r) {
    Entry e{r.cf_id, rep.substr(r.key_offset, r.key_size), r.start, r.end};
    if (in_order && !entries.empty() && before(e, entries.back())) in_order = false;
    entries.push_back(e);
  });
  if (!readable || in_order) return false;
  std::stable_sort(entries.begin(), entries.end(), before);
  out->clear();
  out->reserve(rep.size());
  out->append(rep.data(), kHeaderSize);
  for (const Entry& e : entries) out->append(rep.data() + e.start, e.end - e.start);
  return true;
}

}  // namespace rockcache::storage::batch_records
