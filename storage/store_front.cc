// RocksStore::FrontEntries / KeepFront: a group's read-ahead of a collection's front, for pops.
//
// A pipelined drain (SPOP or ZPOPMIN of one key, many to a group) used to read the front of the
// collection once per pop through the overlay's merged cursor, stepping over the group's own
// pending deletes each time (~9k instructions of a ~30k SPOP). The overlay now keeps what one pop
// read and did not take (TxOverlay::FrontWindow), and the next pop of the same collection takes
// from it while nothing else was written: one read per ~48 pops.
#include <optional>

#include "storage/rocks_store.h"
#include "storage/tx_overlay.h"

namespace rockcache::storage {

namespace {
// Beyond the entries asked for, the read-ahead stops at this many bytes of sub-keys.
constexpr size_t kFrontReadAheadBytes = 16 * 1024;
}  // namespace

StatusOr<std::vector<std::string>*> RocksStore::FrontEntries(rocksdb::ColumnFamilyHandle* cf,
                                                             std::string_view key, const Meta& meta,
                                                             uint64_t want) {
  TxOverlay* const tx = tls_tx_overlay;
  if (tx == nullptr || tx->store() != this) return static_cast<std::vector<std::string>*>(nullptr);
  TxOverlay::FrontWindow* front = tx->FrontOf(key, meta.version);
  // Until KeepFront, the caller is changing them (a pop that fails keeps nothing).
  tx->DropFront();
  std::optional<std::string> after;  // where the entries kept end
  if (front == nullptr || front->members.empty()) {
    front = tx->NewFront(key, meta.version);
  } else if (front->members.size() >= want) {
    return &front->members;
  } else {
    after = ImmediateSuccessor(front->members.back());
  }
  std::vector<std::string>& entries = front->members;
  size_t bytes = 0;
  Status s = ForEachEntry(
      rocksdb::ReadOptions(), cf, key, meta.version,
      [&](std::string_view sub, std::string_view) {
        entries.emplace_back(sub);
        bytes += sub.size();
        return entries.size() < want ||
               (entries.size() < kFrontReadAhead && bytes <= kFrontReadAheadBytes);
      },
      after ? std::optional<std::string_view>(*after) : std::nullopt, false, HintOf(meta));
  if (!s.ok()) return s;
  return &entries;
}

void RocksStore::KeepFront() {
  // If a flush replaced the overlay since FrontEntries, the new one keeps no entries (FrontOf
  // finds no collection there), so stamping it changes nothing.
  if (tls_tx_overlay != nullptr && tls_tx_overlay->store() == this) tls_tx_overlay->StampFront();
}

}  // namespace rockcache::storage
