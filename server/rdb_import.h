// rockcache-server --import-rdb FILE: loads a Redis RDB file (versions up to 10, Redis 7.0's)
// into the store the configuration names, then exits. The server is not running meanwhile (the
// store is opened here alone), so no client sees a half-imported key and no cache holds one.
//
// Streaming: the file is mapped and read front to back once; each key is decoded
// (server/rdb/value_codec.h, every type and encoding RESTORE accepts) and written at once as
// one WriteBatch (Store::WriteValue, replacing a key of the same name); pages already read are
// dropped, so resident memory is about one decoded key plus RocksDB's, whatever the file size.
// SELECTDB picks the database (an error past `databases`), expire times go with their key and
// keys already expired are skipped, AUX fields and RESIZEDB hints are skipped, LRU/LFU hints
// are read and dropped, function libraries (FUNCTION2) are checked and stored as FUNCTION LOAD
// stores them; module data is refused. A progress line is logged every second and a summary at
// the end. A malformed file stops the import at the first bad byte with an error naming its
// offset: the keys before it are written, nothing after it is. The file's CRC-64 (when not 0)
// is checked at the end, after the keys (a mismatch is reported as an error).
#pragma once

#include <cstdint>
#include <string>

#include "config/config.h"
#include "config/status.h"

namespace rockcache::storage {
class Store;
}

namespace rockcache::server {

struct RdbImportStats {
  uint64_t keys = 0;             // written
  uint64_t expired_skipped = 0;  // expire time already past
  uint64_t functions = 0;        // libraries stored
  uint64_t bytes = 0;            // of the file read
  int64_t elapsed_ms = 0;
};

// Imports `path` into `store`. Blocking; the calling thread only. REQUIRES: nothing else uses
// the store meanwhile.
Status ImportRdb(const std::string& path, storage::Store& store, RdbImportStats* stats);

// main()'s --import-rdb: opens the store of `config`, imports, logs the summary, closes. Returns
// the process exit code (0 on success).
int RunRdbImport(const config::Config& config, const std::string& path);

}  // namespace rockcache::server
