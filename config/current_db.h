// The database the calling thread works on: the hidden argument of every storage::Store method
// and every cache::Cache method that names a key (SELECT/MOVE/SWAPDB, "Databases" in
// storage/store.h). Command handlers never see it: the server sets it once per command
// (server/executor.cc, and the network thread around a run-to-completion cache read), so a
// handler written against `ctx.store->Get(key)` / `ctx.cache->Put(key, ...)` works in whatever
// database its connection selected.
//
// The value is a *physical* database index (the column family and cache tag the data lives in),
// not the number a client SELECTed: the server maps one to the other through
// storage::Store::PhysicalDb, so SWAPDB only swaps that mapping.
#pragma once

namespace rockcache {

// The most databases the `databases` option may ask for (the cache tags an entry with one byte).
inline constexpr int kMaxDatabases = 256;

namespace internal {
inline thread_local int tls_current_db = 0;
}  // namespace internal

// The physical database of the calling thread (0 unless a DbScope says otherwise).
inline int CurrentDb() { return internal::tls_current_db; }

// Sets the calling thread's database for its lifetime, restoring the previous one after.
class DbScope {
 public:
  explicit DbScope(int db) : saved_(internal::tls_current_db) { internal::tls_current_db = db; }
  ~DbScope() { internal::tls_current_db = saved_; }
  DbScope(const DbScope&) = delete;
  DbScope& operator=(const DbScope&) = delete;

 private:
  int saved_;
};

}  // namespace rockcache
