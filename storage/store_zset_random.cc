// RocksStore::ZRandMember: random members of a sorted set, sampled from its score index (the
// column family its live-range hint covers) by RandomEntries, so a set with a long deletion
// history costs no more than a fresh one.
#include "storage/encoding.h"
#include "storage/rocks_store.h"

namespace rockcache::storage {

StatusOr<std::vector<ScoredMember>> RocksStore::ZRandMember(std::string_view key, int64_t count,
                                                            uint64_t max_bytes) {
  Hold hold;
  SnapshotRead snap;
  std::vector<ScoredMember> out;
  Meta meta;
  bool found = false;
  if (Status s = BeginRead(key, MetaType::kZSet, &hold, &snap, &meta, &found); !s.ok() || !found) {
    if (!s.ok()) return s;
    return out;
  }
  std::vector<std::pair<std::string, std::string>> picked;
  if (Status s = RandomEntries(snap.options, zscore_cf_, key, meta, count, &picked, max_bytes);
      !s.ok()) {
    return s;
  }
  out.reserve(picked.size());
  for (auto& p : picked) {
    if (p.first.size() < 8) return Status::Corruption("bad score index entry");
    out.push_back(ScoredMember{p.first.substr(8), DecodeScore(p.first.data())});
  }
  return out;
}

}  // namespace rockcache::storage
