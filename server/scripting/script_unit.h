// A script's atomic unit: the locks, write window and WriteBatch a script (EVAL, EVALSHA...) runs
// in, so that no other client observes part of its effect, through the cache or storage, and a
// crash keeps all of its writes or none — as EXEC (server/tx/transaction.h).
//
// A script declares its keys (KEYS); they are locked up front, in ascending stripe order, like
// any command's. A script may still touch keys it did not declare (Redis allows it outside
// cluster mode): each such key's stripe is taken without waiting (try-lock, any order is then
// deadlock-free) and kept until the unit ends. When a stripe is busy, the unit cannot wait for it
// (it holds others): it rolls back everything the script did — nothing reached RocksDB, the
// WriteBatch is dropped — and runs the script again holding every stripe (the exclusive mode
// of a script with undeclared keys). Commands that touch every key (FLUSHALL...) take that mode
// at once.
//
// Worker threads. UnitKeys is the running unit of this thread (set by RunScriptUnit, and by EXEC
// around its commands, so a script inside MULTI runs under EXEC's locks).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cache/key_locks.h"

namespace rockcache::storage {
class WriteGroup;
}

namespace rockcache::server {

class Server;
struct NestedCall;
struct PreparedCommand;
struct ReplyBudget;

namespace scripting {

// The keys the running unit of this thread holds, and the keys its script wrote.
class UnitKeys {
 public:
  // `held`: the stripes the unit holds (ascending); `all`: every stripe; `may_extend`: undeclared
  // keys may be try-locked (false inside EXEC: its locks are all it has). Installs itself as this
  // thread's running unit until destroyed. `group`: the WriteGroup the unit commits.
  UnitKeys(Server& server, const std::vector<uint32_t>& held, bool all, bool may_extend,
           storage::WriteGroup* group);
  ~UnitKeys();
  UnitKeys(const UnitKeys&) = delete;
  UnitKeys& operator=(const UnitKeys&) = delete;

  // This thread's running unit, or nullptr.
  static UnitKeys* Current();

  // Whether a command of the script may touch `keys` (`all_keys`: every key) now: true when the
  // unit holds their stripes or just took them without waiting. False sets needs_all(): the
  // script must not go on; the unit runs it again holding everything.
  bool Admit(const std::vector<std::string_view>& keys, bool all_keys);
  bool needs_all() const { return needs_all_; }
  // A unit sharing a segment with other clients' scripts may run `max_ns` from now at most
  // (script-group-max-usec); 0 = no bound.
  void set_time_bound(uint64_t max_ns);
  // Whether the script has run past its bound: from then on it must not go on (its run raises an
  // error at every line, as a killed one) and needs_all() is set: the unit is rolled back and the
  // script runs again alone. Cheap while no bound is set.
  bool Overran() {
    if (max_ns_ == 0) return false;
    if (!overran_ && OverranSlow()) {
      overran_ = true;
      needs_all_ = true;
    }
    return overran_;
  }
  bool overran() const { return overran_; }
  // A write of the script touched `key` in physical database `db` (blocked clients are served
  // after the commit).
  void NoteWritten(int db, std::string_view key);
  const std::vector<std::pair<int, std::string>>& written() const { return written_; }
  // A command the script called, for INFO commandstats (kept when the unit was given a list).
  void NoteCall(int command_id, uint64_t exec_ns, bool failed);
  void set_calls(std::vector<NestedCall>* calls) { calls_ = calls; }
  storage::WriteGroup* group() const { return group_; }
  // The stripes the unit locked up front (every one in the exclusive mode), ascending.
  const std::vector<uint32_t>& held() const { return held_; }
  // The script was killed (SCRIPT KILL): nothing of it is committed.
  void RollBack() { rolled_back_ = true; }
  bool rolled_back() const { return rolled_back_; }
  // Closes the windows of the stripes taken for undeclared keys (after the commit); the stripes
  // stay held until the unit ends.
  void CloseWindows() { extra_windows_.clear(); }
  // Every stripe held: the unit's and the ones taken for undeclared keys, ascending.
  std::vector<uint32_t> HeldStripes() const;

 private:
  bool Holds(uint32_t stripe) const;
  bool OverranSlow() const;

  Server& server_;
  const std::vector<uint32_t>& held_;
  const bool all_;
  const bool may_extend_;
  storage::WriteGroup* const group_;
  UnitKeys* const previous_;
  std::vector<NestedCall>* calls_ = nullptr;
  bool needs_all_ = false;
  bool rolled_back_ = false;
  uint64_t started_ = 0;  // Clock ticks at set_time_bound
  uint64_t max_ns_ = 0;
  bool overran_ = false;
  std::vector<std::pair<int, std::string>> written_;
  // Stripes taken for undeclared keys; their windows close before the guards release them.
  std::vector<uint32_t> extra_stripes_;
  std::vector<cache::KeyLocks::Guard> extra_guards_;
  std::vector<cache::KeyLocks::WriteWindow> extra_windows_;
};

// Worker thread, as a barrier of the group commit (server/group_commit.h): runs the script
// command `command` (kScript) as one atomic unit — locks, write window, Call in kAtomic mode,
// one commit — and leaves its reply in command->reply. `group` is the worker's WriteGroup (or
// nullptr: it opens one). BLOCKS on key locks and disk. REQUIRES: the thread holds no key lock.
void RunScriptUnit(Server& server, storage::WriteGroup* group, PreparedCommand* command,
                   ReplyBudget* budget);

// Worker thread, inside a shared script segment of the group commit (server/group_commit.h):
// runs the script command `command` as one unit among several that share the caller's locks,
// write window and transaction, and commit together. The script's writes are all-or-nothing
// within the transaction (a savepoint, storage::WriteGroup::Savepoint): a killed script is
// rolled back to it and the others' writes stay. A script that touches a key whose stripe the
// segment does not hold (or every key) is rolled back to it too and false is returned: the
// caller commits what came before, releases its locks and runs the script alone
// (RunScriptUnit). True: the script ran (or was killed); the keys it wrote are appended to
// *written (physical database, key) for the clients blocked on them, served after the commit.
// REQUIRES: `group` in a transaction (BeginAtomic); the caller holds the stripes `held`
// (ascending) and a write window over them until the commit.
// `max_ns` (0 = none): the script's time bound (UnitKeys::set_time_bound); past it the script is
// rolled back and false is returned, as for a key the segment does not hold.
bool RunScriptInSegment(Server& server, storage::WriteGroup* group, PreparedCommand* command,
                        ReplyBudget* budget, const std::vector<uint32_t>& held, uint64_t max_ns,
                        std::vector<std::pair<int, std::string>>* written);

}  // namespace scripting
}  // namespace rockcache::server
