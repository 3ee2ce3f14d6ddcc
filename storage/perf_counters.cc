#include "storage/perf_counters.h"

#include <rocksdb/perf_context.h>
#include <rocksdb/perf_level.h>

namespace rockcache::storage {

namespace {
thread_local bool tls_level_decided = false;  // this thread's perf level was set (by us)
}  // namespace

void QuietPerfCounting() {
  if (tls_level_decided) return;
  tls_level_decided = true;
  rocksdb::SetPerfLevel(rocksdb::PerfLevel::kDisable);
}

PerfScope::PerfScope() : previous_level_(static_cast<int>(rocksdb::GetPerfLevel())) {
  tls_level_decided = true;
  rocksdb::SetPerfLevel(rocksdb::PerfLevel::kEnableCount);
  Reset();
}

PerfScope::~PerfScope() { rocksdb::SetPerfLevel(static_cast<rocksdb::PerfLevel>(previous_level_)); }

void PerfScope::Reset() { rocksdb::get_perf_context()->Reset(); }

PerfCounts PerfScope::Read() const {
  const rocksdb::PerfContext* p = rocksdb::get_perf_context();
  PerfCounts c;
  c.internal_key_skipped = p->internal_key_skipped_count;
  c.internal_delete_skipped = p->internal_delete_skipped_count;
  c.internal_range_del_reseek = p->internal_range_del_reseek_count;
  c.seek_on_memtable = p->seek_on_memtable_count;
  c.next_on_memtable = p->next_on_memtable_count;
  c.prev_on_memtable = p->prev_on_memtable_count;
  c.block_read = p->block_read_count;
  c.block_read_bytes = p->block_read_byte;
  c.get_from_memtable = p->get_from_memtable_count;
  c.user_key_comparison = p->user_key_comparison_count;
  return c;
}

}  // namespace rockcache::storage
