#include "server/scripting/script_unit.h"

#include <algorithm>
#include <memory>

#include "cache/cache.h"
#include "config/current_db.h"
#include "server/blocking/serve.h"
#include "server/call.h"
#include "server/clock.h"
#include "server/protocol/reply.h"
#include "server/scripting/scripting.h"
#include "server/server.h"
#include "server/unit_cache.h"
#include "storage/store.h"

namespace rockcache::server::scripting {
namespace {
thread_local UnitKeys* tls_unit = nullptr;
}  // namespace

UnitKeys::UnitKeys(Server& server, const std::vector<uint32_t>& held, bool all, bool may_extend,
                   storage::WriteGroup* group)
    : server_(server),
      held_(held),
      all_(all),
      may_extend_(may_extend),
      group_(group),
      previous_(tls_unit) {
  tls_unit = this;
}

UnitKeys::~UnitKeys() {
  extra_windows_.clear();  // before the guards release their stripes
  extra_guards_.clear();
  tls_unit = previous_;
}

UnitKeys* UnitKeys::Current() { return tls_unit; }

void UnitKeys::set_time_bound(uint64_t max_ns) {
  max_ns_ = max_ns;
  started_ = max_ns != 0 ? Clock::Now() : 0;
}

bool UnitKeys::OverranSlow() const { return Clock::NanosBetween(started_, Clock::Now()) > max_ns_; }

bool UnitKeys::Holds(uint32_t stripe) const {
  return std::binary_search(held_.begin(), held_.end(), stripe) ||
         std::find(extra_stripes_.begin(), extra_stripes_.end(), stripe) != extra_stripes_.end();
}

bool UnitKeys::Admit(const std::vector<std::string_view>& keys, bool all_keys) {
  if (all_) return true;
  if (needs_all_) return false;
  if (all_keys) {
    needs_all_ = true;
    return false;
  }
  cache::KeyLocks& locks = server_.key_locks();
  for (auto key : keys) {
    const auto stripe = static_cast<uint32_t>(locks.StripeOf(key));
    if (Holds(stripe)) continue;
    cache::KeyLocks::Guard guard;
    // Never waits: a stripe this thread holds for nothing else, or free. A busy one (or any,
    // inside EXEC) sends the script to the exclusive mode.
    if (may_extend_) guard = locks.TryLockStripe(stripe);
    if (!guard.owns_lock()) {
      needs_all_ = true;
      return false;
    }
    extra_stripes_.push_back(stripe);
    extra_guards_.push_back(std::move(guard));
    if (server_.cache() != nullptr) {
      extra_windows_.emplace_back(locks, std::vector<uint32_t>{stripe});
    }
  }
  return true;
}

std::vector<uint32_t> UnitKeys::HeldStripes() const {
  std::vector<uint32_t> stripes = held_;
  stripes.insert(stripes.end(), extra_stripes_.begin(), extra_stripes_.end());
  std::sort(stripes.begin(), stripes.end());
  return stripes;
}

void UnitKeys::NoteCall(int command_id, uint64_t exec_ns, bool failed) {
  if (calls_ == nullptr) return;
  NestedCall call;
  call.command_id = command_id;
  call.exec_ns = exec_ns;
  call.failed = failed;
  if (calls_->capacity() == 0) calls_->reserve(4);  // one allocation for a script's first calls
  calls_->push_back(call);
}

void UnitKeys::NoteWritten(int db, std::string_view key) {
  for (const auto& [d, k] : written_) {
    if (d == db && k == key) return;
  }
  written_.emplace_back(db, std::string(key));
}

void RunScriptUnit(Server& server, storage::WriteGroup* group, PreparedCommand* command,
                   ReplyBudget* budget) {
  std::unique_ptr<storage::WriteGroup> own;
  if (group == nullptr) {
    own = server.store()->OpenWriteGroup();
    group = own.get();
  }
  const CommandSpec& spec = *command->spec;
  cache::KeyLocks& locks = server.key_locks();
  const std::vector<std::string_view> declared = CommandKeys(spec, command->argv);
  // First with the declared keys; again with every stripe when the script needed more.
  for (const bool all : {false, true}) {
    cache::KeyLocks::Guard guard = all ? locks.LockAll() : locks.Lock(declared);
    // Visible to the network threads (-BUSY past busy-reply-threshold) while it holds them.
    Scripting& scripting = server.scripting();
    struct Registration {
      Scripting& scripting;
      uint64_t handle;
      ~Registration() { scripting.UnregisterUnit(handle); }
    } registration{scripting,
                   scripting.RegisterUnit(guard.stripes(), all, NowUnixMs(), &command->argv)};
    command->reply.clear();
    cache::KeyLocks::WriteWindow window;
    if (server.cache() != nullptr) window = cache::KeyLocks::WriteWindow(locks, &guard.stripes());
    UnitCache::Scope unit_cache(server.cache());  // a rerun starts from a new one
    UnitKeys unit(server, guard.stripes(), all, /*may_extend=*/!all, group);
    command->nested.clear();
    unit.set_calls(&command->nested);
    group->BeginAtomic();
    CallRequest request;
    request.spec = &spec;
    request.argv = &command->argv;
    request.out = &command->reply;
    request.mode = CallMode::kAtomic;
    request.db = command->db;
    request.now_ms = NowUnixMs();
    request.budget = budget;
    Call(server, request);
    if (unit.needs_all() && !all) {
      group->Rollback();
      continue;
    }
    Status s = unit.rolled_back() ? Status::OK() : group->Commit();
    if (unit.rolled_back()) group->Rollback();
    if (!s.ok()) {
      // Nothing of the script reached RocksDB, and the cache still holds its keys' committed
      // values (its own writes went to the unit's staging cache, dropped below).
      command->reply.clear();
      AppendStatusError(&command->reply, s);
    }
    if (s.ok() && !unit.rolled_back()) {
      unit_cache.Publish(NowUnixMs());
    } else {
      unit_cache.Discard();
    }
    window.Close();
    unit.CloseWindows();
    // Clients blocked on keys the script pushed to are served after it, as after EXEC, still
    // under its locks.
    if (s.ok() && !unit.rolled_back() && !unit.written().empty() && server.blocking().any()) {
      const std::vector<uint32_t> held = unit.HeldStripes();
      for (const auto& [db, key] : unit.written()) {
        DbScope scope(db);
        ServeBlockedOn(server, {key}, held, /*in_write_window=*/false);
      }
    }
    return;
  }
}

bool RunScriptInSegment(Server& server, storage::WriteGroup* group, PreparedCommand* command,
                        ReplyBudget* budget, const std::vector<uint32_t>& held, uint64_t max_ns,
                        std::vector<std::pair<int, std::string>>* written) {
  Scripting& scripting = server.scripting();
  struct Registration {
    Scripting& scripting;
    uint64_t handle;
    ~Registration() { scripting.UnregisterUnit(handle); }
  } registration{scripting,
                 scripting.RegisterUnit(held, /*all=*/false, NowUnixMs(), &command->argv)};
  command->reply.clear();
  UnitKeys unit(server, held, /*all=*/false, /*may_extend=*/false, group);
  unit.set_time_bound(max_ns);
  command->nested.clear();
  unit.set_calls(&command->nested);
  group->Savepoint();
  CallRequest request;
  request.spec = command->spec;
  request.argv = &command->argv;
  request.out = &command->reply;
  request.mode = CallMode::kAtomic;
  request.db = command->db;
  request.now_ms = NowUnixMs();
  request.budget = budget;
  Call(server, request);
  if (unit.needs_all() || unit.rolled_back()) {
    group->RollbackToSavepoint();
    if (UnitCache* unit_cache = UnitCache::Current()) unit_cache->RollbackToSavepoint();
  }
  if (unit.needs_all()) {
    command->reply.clear();
    command->nested.clear();
    return false;
  }
  if (unit.rolled_back()) return true;
  written->insert(written->end(), unit.written().begin(), unit.written().end());
  return true;
}

}  // namespace rockcache::server::scripting
