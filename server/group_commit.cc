#include "server/group_commit.h"

#include <string>
#include <string_view>
#include <utility>

#include "cache/cache.h"
#include "cache/key_locks.h"
#include "config/current_db.h"
#include "pool/worker_pool.h"
#include "server/blocking/serve.h"
#include "server/blocking/wait_registry.h"
#include "server/call.h"
#include "server/clock.h"
#include "server/commands/reply_budget.h"
#include "server/flat_key_set.h"
#include "server/group_charges.h"
#include "server/net_loop.h"
#include "server/protocol/reply.h"
#include "server/pubsub/pubsub.h"
#include "server/scripting/script_unit.h"
#include "server/server.h"
#include "server/slicing/slice_task.h"
#include "server/tracking/tracking.h"
#include "server/tx/transaction.h"
#include "server/unit_cache.h"
#include "storage/store.h"

namespace rockcache::server {

namespace {

// The keys one segment locks at most (a single command with more still runs alone in one). A
// pipelined group of multi-key writes (50 clients x MSET of 10 keys x pipeline 16 = 8,000 keys)
// would otherwise hold nearly every one of the 4,096 stripes for the whole group: no other
// worker's group could lock anything until its commit, and sorting and locking thousands of
// stripes costs more than the extra commit of a second segment. 512 keys cover about one stripe
// in eight, so a group of single-key commands at pipeline 16 still commits once or twice.
constexpr size_t kMaxSegmentKeys = 512;

// A command that cannot share a segment's locks: it takes its own (all of them, or none).
bool IsBarrier(const PreparedCommand& command) {
  if (command.spec == nullptr) return false;
  const uint32_t flags = command.spec->flags;
  if (flags & (kAllKeys | kScript)) return true;
  return command.spec->first_key == 0 && command.spec->find_keys == nullptr && !(flags & kAnywhere);
}

// A segment's write window (cache/key_locks.h): the distinct stripes of its writes' keys marked
// written from before the first write changes the cache until the segment's RocksDB commit,
// which happens before the window closes. Commands run with CallRequest::in_write_window.
// `stripes` keeps the stripes for the window's life (reused between segments). No cache: nothing
// to fence, an empty window.
// REQUIRES: the segment's locks, which cover those stripes, are held for the window's life.
cache::KeyLocks::WriteWindow SegmentWindow(Server& server,
                                           const std::vector<std::string_view>& keys,
                                           std::vector<uint32_t>* stripes) {
  stripes->clear();
  if (server.cache() == nullptr || keys.empty()) return {};
  server.key_locks().StripesOf(keys, stripes);
  return cache::KeyLocks::WriteWindow(server.key_locks(), stripes);
}

class GroupTask : public pool::Task {
 public:
  // `handed_on`: batches another group task handed on (HandOn); the loop counted that task, not
  // this one, among the groups it sent (NetLoop::NoteGroupDone).
  GroupTask(Server* server, uint32_t loop_index, std::vector<ConnBatch> group, bool charge_clients,
            bool handed_on = false)
      : server_(server),
        loop_index_(loop_index),
        group_(std::move(group)),
        charge_(charge_clients),
        handed_on_(handed_on),
        charges_(group_.size()) {}

  void Run() override {
    const uint64_t dequeued = Clock::Now();
    started_ = dequeued;
    for (auto& batch : group_) {
      if (batch.times.parsed != 0) batch.times.dequeued = dequeued;
    }
    write_group_ = server_->store()->OpenWriteGroup();
    budgets_.resize(group_.size());
    // Sized once for the whole group (a group of a few batches otherwise grows each vector
    // 1, 2, 4: ~2% of a SET's instructions at pipeline 1).
    size_t commands = 0;
    for (const auto& batch : group_) commands += batch.commands.size();
    order_.reserve(commands);
    budget_of_.reserve(commands);
    pending_.reserve(commands);
    pending_batches_.reserve(commands);
    for (size_t b = 0; b < group_.size(); ++b) {
      budgets_[b].left = group_[b].reply_budget;
      budgets_[b].owner = &group_[b];
      for (auto& command : group_[b].commands) {
        order_.push_back(&command);
        budget_of_.push_back(&budgets_[b]);
      }
    }
    size_t i = 0;
    std::vector<std::string_view> keys;
    std::vector<std::string_view> written_keys;  // the keys of the segment's writes
    keys.reserve(commands);
    written_keys.reserve(commands);
    while (i < order_.size()) {
      size_t j = i;
      keys.clear();
      written_keys.clear();
      bool capped = false;  // the segment ends at kMaxSegmentKeys, not at a barrier
      for (; j < order_.size() && !IsBarrier(*order_[j]); ++j) {
        if (order_[j]->spec == nullptr) continue;
        if (j > i && keys.size() >= kMaxSegmentKeys) {
          capped = true;
          break;
        }
        const size_t first = keys.size();
        AppendCommandKeys(*order_[j]->spec, order_[j]->argv, &keys);
        if (order_[j]->spec->flags & kWrite) {
          written_keys.insert(written_keys.end(), keys.begin() + first, keys.end());
        }
      }
      if (j > i) {
        auto guard = server_->key_locks().Lock(keys);
        // The write window of the segment's written stripes stays open until its commit: until
        // then RocksDB does not hold what the cache may already show (cache/key_locks.h).
        const cache::KeyLocks::WriteWindow window =
            SegmentWindow(*server_, written_keys, &window_stripes_);
        const bool read_ahead = ReadAheadMisses(i, j, written_keys);
        for (size_t k = i; k < j;) {
          ChargeFrom(k);
          const size_t run = WriteRunLength(k, j);
          Tracking::WriterScope writer(RunWriter(k, run));  // NOLOOP (server/tracking/)
          if (run > 1) {
            RunWrites(k, run);
          } else {
            RunInSegment(order_[k], budget_of_[k]);
          }
          k += run;
        }
        if (read_ahead) server_->store()->EndReadAhead();
        CommitPending();
      }
      if (capped) {
        i = j;
        continue;
      }
      if (j < order_.size()) {
        // Consecutive scripts share one segment and one commit (RunScripts); one that needs keys
        // the segment does not hold runs alone, as a barrier, right after it.
        const size_t scripts = ScriptSegmentLength(j);
        if (scripts >= 2) {
          const size_t ran = RunScripts(j, scripts);
          if (ran == scripts) {
            i = j + scripts;
            continue;
          }
          j += ran;
          if (HandOn(j)) break;
        }
        ChargeFrom(j);
        PreparedCommand* barrier = order_[j];
        Tracking::WriterScope writer(budget_of_[j]->owner->conn_id);
        Budgeted(barrier, budget_of_[j], [&](ReplyBudget* budget) {
          if (barrier->tx != nullptr) {  // EXEC: takes its own locks, commits as one batch
            RunTxCommand(*server_, write_group_.get(), barrier, budget);
            return;
          }
          if (barrier->spec->flags & kScript) {  // the same, for a script
            Tracking::ReaderScope reader(barrier->track_script_reads ? budget_of_[j]->owner->conn_id
                                                                     : 0);
            scripting::RunScriptUnit(*server_, write_group_.get(), barrier, budget);
            return;
          }
          CallRequest request;
          request.spec = barrier->spec;
          request.argv = &barrier->argv;
          request.out = &barrier->reply;
          request.db = barrier->db;
          request.now_ms = NowUnixMs();
          request.budget = budget;
          request.slices = SinkFor(barrier, budget_of_[j]);
          request.rtc_missed = barrier->rtc_missed;
          CallWithLocks(*server_, request);
        });
        NoteSliced(barrier, budget_of_[j]);
        CommitPending();
      }
      i = j + 1;
    }
    write_group_.reset();
    ChargeClients();
    PostAll(/*with_commands=*/true);
  }

  void Cancel() override {
    for (auto& batch : group_) {
      for (auto& command : batch.commands) {
        command.reply.clear();
        AppendError(&command.reply, "ERR server is shutting down");
      }
    }
    PostAll(/*with_commands=*/false);  // no stage metrics for commands that never ran
  }

 private:
  template <typename Fn>
  void Timed(PreparedCommand* command, Fn run) {
    const bool timed = group_timed();
    if (timed) command->exec_start = Clock::Now();
    ReplyProtocolScope protocol(command->protocol);
    run();
    if (timed) command->exec_end = Clock::Now();
  }
  bool group_timed() const { return !group_.empty() && group_.front().times.parsed != 0; }

  // The reply budget of one batch (its client's output-buffer room), spent by its commands in
  // order; once over, the batch runs nothing more and its client is closed with no reply.
  // A batch whose command was sliced (server/slicing/) runs nothing more in this group: the
  // commands after it go back to the loop with the read's last chunk.
  struct BatchBudget {
    uint64_t left = UINT64_MAX;
    bool over = false;
    ConnBatch* owner = nullptr;
    SliceSink sink;               // the sliced read of the batch, if one was deferred
    size_t sliced_at = SIZE_MAX;  // index in owner->commands of the sliced command
  };

  // The sink a command may leave a sliced read in: none inside EXEC/WATCH, for a blocking
  // command, or when the batch has no ClientInfo to see its connection close by.
  SliceSink* SinkFor(const PreparedCommand* command, BatchBudget* batch) {
    if (command->tx != nullptr || command->waiter || batch->owner->info == nullptr) return nullptr;
    return &batch->sink;
  }
  // After a command ran: when it deferred a sliced read, its batch stops here.
  void NoteSliced(const PreparedCommand* command, BatchBudget* batch) {
    if (batch->sink.deferred == nullptr || batch->sliced_at != SIZE_MAX) return;
    if (batch->over) {  // over its output limit anyway: the client is closed
      batch->sink.deferred.reset();
      return;
    }
    batch->sliced_at = static_cast<size_t>(command - batch->owner->commands.data());
  }

  // Runs `run(ReplyBudget*)` (one command) under its batch's budget, timed; skips it when the
  // batch is already over.
  template <typename Fn>
  void Budgeted(PreparedCommand* command, BatchBudget* batch, Fn run) {
    if (batch->over || batch->sliced_at != SIZE_MAX) return;
    ReplyBudget budget;
    if (batch->left < budget.max_out) budget.max_out = static_cast<size_t>(batch->left);
    Timed(command, [&] { run(&budget); });
    if (budget.exceeded || command->reply.size() > budget.max_out) {
      batch->over = true;
      return;
    }
    if (batch->left != UINT64_MAX) batch->left -= command->reply.size();
  }

  // Before the segment [i, j) runs, under its locks: the metas of its misses — single-key cache
  // reads (GET, HGET, TTL...) whose key the cache does not hold — read together
  // (storage::Store::BeginReadAhead), so a pipeline's or a group's cold reads share one MultiGet
  // instead of a Get each. A key some write of the segment touches is left out: what was read
  // ahead of it would be outdated by the write. Nothing else can change a key meanwhile (the
  // segment holds its stripe), so a key the cache misses now still misses when its command runs,
  // unless a network thread's memory fill (which takes no stripe) installed it: then the
  // read-ahead of that key goes unused. Returns whether a read-ahead was started (the caller
  // ends it before the locks go).
  bool ReadAheadMisses(size_t i, size_t j, const std::vector<std::string_view>& written_keys) {
    read_ahead_keys_.clear();
    if (!written_keys.empty()) {
      written_in_segment_.Clear();
      for (auto key : written_keys) written_in_segment_.Insert(key);
    }
    storage::Store* store = server_->store();
    cache::Cache* cache = server_->cache();
    const bool cache_on = cache != nullptr && cache->enabled();
    const int64_t now_ms = cache_on ? NowUnixMs() : 0;
    for (size_t k = i; k < j; ++k) {
      const PreparedCommand& command = *order_[k];
      if (command.spec == nullptr || command.tx != nullptr) continue;
      const CommandSpec& spec = *command.spec;
      if (!(spec.flags & kCacheRead) || (spec.flags & kWrite) || spec.find_keys != nullptr ||
          spec.first_key != 1 || spec.last_key != 1 || command.argv.size() < 2) {
        continue;
      }
      const std::string_view key = command.argv[1];
      if (!written_keys.empty() && written_in_segment_.Contains(key)) continue;
      const int db = store->PhysicalDb(command.db);
      if (cache_on) {
        DbScope scope(db);
        if (cache->Inspect(key, now_ms, [](const cache::Value&) {}) != cache::Lookup::kMiss)
          continue;
      }
      read_ahead_keys_.push_back(storage::ReadAheadKey{db, key});
    }
    if (read_ahead_keys_.size() < 2) return false;
    store->BeginReadAhead(read_ahead_keys_);
    return true;
  }

  // Before a write or read of `keys` in a segment: read-your-writes. A long run on one key (a
  // pipelined drain) commits and goes on in a new overlay, so each read through it stays cheap
  // (it is a skip list of the pending writes, and pops leave deletes in it that iterations step
  // over); the segment keeps its locks, so the new overlay keeps what the old one read ahead of
  // a pop. A key an earlier command of the segment wrote: storage reads must see that write.
  // Rather than one RocksDB write per command on a hot key, the rest of the segment reads
  // through the indexed overlay of its pending writes (storage::WriteGroup::BeginIndexed).
  void ReadYourWrites(const std::vector<std::string_view>& keys) {
    if (indexed_ && pending_.size() >= kMaxIndexedWrites) CommitPending(/*reindex=*/true);
    if (indexed_) return;
    for (auto key : keys) {
      if (written_.Contains(key)) {
        CommitPending();
        write_group_->BeginIndexed();
        indexed_ = true;
        return;
      }
    }
  }

  // Whether order_[k] may join a write run (WriteRun, server/commands/command.h): a plain
  // command (not EXEC/WATCH, not blocking) of a batch still running, with room for its reply to
  // spare. The room matters for pops: a run pops for all its commands before any reply is
  // counted, and a batch that passes its output limit is closed with the commands after the
  // limit not run; kRunReplyRoom makes that case a batch with 64 MB of replies still to go.
  bool JoinsRun(size_t k) const {
    const PreparedCommand& command = *order_[k];
    const BatchBudget& batch = *budget_of_[k];
    return command.tx == nullptr && !command.waiter && !batch.over && batch.sliced_at == SIZE_MAX &&
           batch.left >= kRunReplyRoom && command.spec->write_run->joins(command.argv);
  }

  // How many commands from order_[k] on, within the segment [.., j), run as one write run: the
  // same row on the same key, database and protocol, each joining (JoinsRun). 1 = order_[k] runs
  // alone.
  size_t WriteRunLength(size_t k, size_t j) {
    const PreparedCommand& head = *order_[k];
    const CommandSpec* spec = head.spec;
    if (spec == nullptr || spec->write_run == nullptr || k + 1 >= j) return 1;
    auto same = [&](const PreparedCommand& next) {
      return next.spec == spec && next.db == head.db && next.protocol == head.protocol &&
             next.argv[1] == head.argv[1];
    };
    if (!same(*order_[k + 1]) || !JoinsRun(k) || !WriteRunsAllowed(*server_)) return 1;
    size_t n = 1;
    while (k + n < j && n < kMaxRunCommands && same(*order_[k + n]) && JoinsRun(k + n)) ++n;
    return n;
  }

  // The client that sent order_[k, k + n): one connection's, or 0 when they mix clients.
  uint64_t RunWriter(size_t k, size_t n) const {
    const uint64_t client = budget_of_[k]->owner->conn_id;
    for (size_t m = k + 1; m < k + n; ++m) {
      if (budget_of_[m]->owner->conn_id != client) return 0;
    }
    return client;
  }

  // Runs order_[k, k + n) as one write run (CallRun) under the segment's locks; each
  // command then stands as if it had run alone: timed, its reply counted against its batch,
  // pending until the commit.
  void RunWrites(size_t k, size_t n) {
    PreparedCommand& head = *order_[k];
    command_keys_.assign(1, std::string_view(head.argv[1]));
    ReadYourWrites(command_keys_);
    run_.argvs.clear();
    run_.replies.clear();
    for (size_t m = k; m < k + n; ++m) {
      run_.argvs.push_back(&order_[m]->argv);
      run_.replies.push_back(&order_[m]->reply);
    }
    const bool timed = group_timed();
    const uint64_t start = timed ? Clock::Now() : 0;
    ReplyProtocolScope protocol(head.protocol);  // a run's commands share it (WriteRunLength)
    CallRun(*server_, *head.spec, run_, NowUnixMs(), head.db);
    const uint64_t end = timed ? Clock::Now() : 0;
    for (size_t m = k; m < k + n; ++m) {
      PreparedCommand* command = order_[m];
      BatchBudget* batch = budget_of_[m];
      if (timed) {
        command->exec_start = start;
        command->exec_end = end;
      }
      if (command->reply.size() > batch->left) {
        batch->over = true;
      } else if (batch->left != UINT64_MAX) {
        batch->left -= command->reply.size();
      }
      pending_.push_back(command);
      pending_batches_.push_back(static_cast<size_t>(batch - budgets_.data()));
    }
    if (!indexed_) written_.Insert(command_keys_.begin(), command_keys_.end());
  }

  void RunInSegment(PreparedCommand* command, BatchBudget* batch) {
    if (command->spec == nullptr) return;  // the reply was decided by the network thread
    if (batch->over || batch->sliced_at != SIZE_MAX) return;
    const CommandSpec& spec = *command->spec;
    std::vector<std::string_view>& keys = command_keys_;
    keys.clear();
    AppendCommandKeys(spec, command->argv, &keys);
    ReadYourWrites(keys);
    // The clock is read per command: an entry must not look alive to a command that runs after
    // its expiry just because an earlier command of the group was slow.
    Budgeted(command, batch, [&](ReplyBudget* budget) {
      if (command->tx != nullptr) {  // WATCH, under the segment's locks of its keys
        RunTxCommand(*server_, write_group_.get(), command, budget);
        return;
      }
      CallRequest request;
      request.spec = &spec;
      request.argv = &command->argv;
      request.out = &command->reply;
      request.db = command->db;
      request.now_ms = NowUnixMs();
      request.budget = budget;
      request.waiter = command->waiter ? &command->waiter : nullptr;
      request.slices = SinkFor(command, batch);
      request.rtc_missed = command->rtc_missed;
      request.in_write_window = true;
      Call(*server_, request);
    });
    NoteSliced(command, batch);
    if (spec.flags & kWrite) {
      if (!indexed_) written_.Insert(keys.begin(), keys.end());
      pending_.push_back(command);
      pending_batches_.push_back(static_cast<size_t>(batch - budgets_.data()));
    }
  }

  // Whether order_[k] may run in a shared script segment: a script (EVAL, EVALSHA, FCALL...)
  // outside EXEC.
  bool SharesScriptSegment(size_t k) const {
    const PreparedCommand& command = *order_[k];
    return command.spec != nullptr && (command.spec->flags & kScript) && command.tx == nullptr;
  }

  // How many commands from order_[j] on form one shared script segment: consecutive scripts
  // (SharesScriptSegment) declaring at most kMaxSegmentKeys keys together (the first whatever
  // it declares). 0 when order_[j] is not such a script, or script-group-commit is off.
  size_t ScriptSegmentLength(size_t j) {
    if (!server_->settings().script_group_commit.load(std::memory_order_relaxed)) return 0;
    size_t n = 0;
    size_t declared = 0;
    for (size_t k = j; k < order_.size() && SharesScriptSegment(k); ++k, ++n) {
      segment_keys_.clear();
      AppendCommandKeys(*order_[k]->spec, order_[k]->argv, &segment_keys_);
      if (n > 0 && declared + segment_keys_.size() > kMaxSegmentKeys) break;
      declared += segment_keys_.size();
    }
    return n;
  }

  // Runs the scripts order_[j, j + n) as one segment: the stripes of every key they declare
  // locked at once, one write window over them, one transaction (WriteGroup::BeginAtomic) in
  // which each script is all-or-nothing (a savepoint: RunScriptInSegment), one commit for all
  // of them. No other client observes a script's effect before that commit: its writes go to the
  // unit's staging cache (server/unit_cache.h), published after the commit; the shared cache
  // cannot be filled while the window is open, and storage readers need the stripes. Clients
  // blocked on keys the scripts wrote are served after the commit, as after a script unit.
  // Returns how many scripts ran (or were skipped: their batch was over): fewer than n when
  // order_[j + returned] needs keys the segment does not hold (the caller runs it alone next;
  // the segment's earlier scripts are committed by then).
  size_t RunScripts(size_t j, size_t n) {
    segment_keys_.clear();
    for (size_t k = j; k < j + n; ++k) {
      AppendCommandKeys(*order_[k]->spec, order_[k]->argv, &segment_keys_);
    }
    cache::KeyLocks& locks = server_->key_locks();
    auto guard = locks.Lock(segment_keys_);
    cache::KeyLocks::WriteWindow window;
    if (server_->cache() != nullptr) window = cache::KeyLocks::WriteWindow(locks, &guard.stripes());
    UnitCache::Scope unit_cache(server_->cache());
    write_group_->BeginAtomic();
    script_written_.clear();
    // A script run again must not publish its keyspace events twice: with events on, no bound.
    const uint64_t max_script_ns =
        server_->pubsub().notify_flags() != 0
            ? 0
            : server_->settings().script_group_max_usec.load(std::memory_order_relaxed) * 1000;
    size_t ran = 0;
    for (; ran < n; ++ran) {
      const size_t k = j + ran;
      PreparedCommand* command = order_[k];
      BatchBudget* batch = budget_of_[k];
      ChargeFrom(k);
      Tracking::WriterScope writer(batch->owner->conn_id);
      Tracking::ReaderScope reader(command->track_script_reads ? batch->owner->conn_id : 0);
      bool started = false;
      bool alone = false;
      const uint64_t max_ns = CanHandOn(k) ? max_script_ns : 0;
      Budgeted(command, batch, [&](ReplyBudget* budget) {
        started = true;
        alone = !scripting::RunScriptInSegment(*server_, write_group_.get(), command, budget,
                                               guard.stripes(), max_ns, &script_written_);
      });
      if (alone) break;
      if (started) {
        pending_.push_back(command);
        pending_batches_.push_back(static_cast<size_t>(batch - budgets_.data()));
      }
    }
    bool committed = true;
    if (pending_.empty()) {
      (void)write_group_->Commit();  // nothing ran: ends the (empty) transaction
    } else {
      committed = CommitPending();
    }
    if (committed) {
      unit_cache.Publish(NowUnixMs());
    } else {
      unit_cache.Discard();
    }
    window.Close();
    if (committed && !script_written_.empty() && server_->blocking().any()) {
      for (const auto& [db, key] : script_written_) {
        DbScope scope(db);
        ServeBlockedOn(*server_, {key}, guard.stripes(), /*in_write_window=*/false);
      }
    }
    return ran;
  }

  // Whether order_[k] could be handed on (HandOn): it is its batch's only command and other
  // batches share the group. Only such a script has a time bound in a shared segment.
  bool CanHandOn(size_t k) const {
    const ConnBatch& batch = *budget_of_[k]->owner;
    return group_.size() > 1 && batch.commands.size() == 1;
  }

  // After RunScripts stopped at order_[k] (a script that needs keys the segment did not hold, or
  // ran past script-group-max-usec), which runs alone next. When it is its batch's only command,
  // it is handed to a task of its own and the batches after it to another, so that neither
  // waits behind the other nor delays the replies of this group's earlier batches (posted when
  // this task ends, now). Returns whether it did (this task then runs nothing more).
  bool HandOn(size_t k) {
    if (!CanHandOn(k)) return false;
    const auto b = static_cast<size_t>(budget_of_[k] - budgets_.data());
    if (budgets_[b].over || budgets_[b].sliced_at != SIZE_MAX) return false;
    std::vector<ConnBatch> alone;
    alone.push_back(std::move(group_[b]));
    std::vector<ConnBatch> rest;
    for (size_t x = b + 1; x < group_.size(); ++x) rest.push_back(std::move(group_[x]));
    group_.erase(group_.begin() + static_cast<std::ptrdiff_t>(b), group_.end());
    budgets_.erase(budgets_.begin() + static_cast<std::ptrdiff_t>(b), budgets_.end());
    order_.resize(k);
    budget_of_.resize(k);
    for (auto* part : {&alone, &rest}) {
      if (part->empty()) continue;
      pool::WorkerPool* pool = server_->worker_pool();
      pool->Submit(std::make_unique<GroupTask>(server_, loop_index_, std::move(*part), charge_,
                                               /*handed_on=*/true));
    }
    return true;
  }

  // Makes the writes since the last commit durable (one RocksDB Write). REQUIRES: the locks of
  // their keys are still held. `reindex` (an indexed segment going on): the segment stays
  // indexed, in a new overlay (WriteGroup::CommitAndReindex).
  // Returns false when the commit failed (the pending commands were answered with its error).
  bool CommitPending(bool reindex = false) {
    bool ok = true;
    reindex = reindex && indexed_;
    // Also with nothing pending when commands wrote: an earlier early flush's error is reported
    // by this Commit.
    if (write_group_->pending() > 0 || !pending_.empty()) {
      if (charge_) charges_.Mark(ChargeClock());
      Status s = reindex ? write_group_->CommitAndReindex() : write_group_->Commit();
      if (charge_) ChargeCommit();
      if (!s.ok()) {
        FailPending(s);
        ok = false;
      }
      if (group_timed()) {
        const uint64_t now = Clock::Now();
        for (PreparedCommand* command : pending_) command->exec_end = now;
      }
    }
    pending_.clear();
    pending_batches_.clear();
    written_.Clear();
    indexed_ = reindex;  // Commit ended the indexed overlay; CommitAndReindex opened another
    return ok;
  }

  // The commit just made is shared by the commands it made durable (GroupCharges::Shared); a
  // barrier's own writes (pending_ empty) stay charged to its batch.
  void ChargeCommit() { charges_.Shared(pending_batches_, ChargeClock()); }

  // Inside the segment's write window, which covers the stripes of every pending write.
  void FailPending(const Status& status) {
    cache::Cache* cache = server_->cache();
    for (PreparedCommand* command : pending_) {
      command->reply.clear();
      AppendStatusError(&command->reply, status);
      if (cache == nullptr) continue;
      DbScope scope(server_->store()->PhysicalDb(command->db));
      for (auto key : CommandKeys(*command->spec, command->argv)) cache->Erase(key);
    }
  }

  void PostAll(bool with_commands) {
    std::vector<Completion> completions;
    completions.reserve(group_.size());
    std::vector<std::unique_ptr<SliceState>> continuations;
    for (size_t b = 0; b < group_.size(); ++b) {
      ConnBatch& batch = group_[b];
      // A blocked command (always alone in its batch): whoever ends the wait replies.
      if (batch.commands.size() == 1 && batch.commands[0].waiter &&
          batch.commands[0].waiter->queued) {
        continue;
      }
      Completion completion;
      completion.conn_id = batch.conn_id;
      if (b < budgets_.size() && budgets_[b].over) {
        // Over the client's output-buffer limit: send nothing, close it.
        completion.close_client = true;
        if (with_commands) completion.commands = std::move(batch.commands);
        completion.times = batch.times;
        completions.push_back(std::move(completion));
        continue;
      }
      // A sliced batch: the replies up to the sliced command's first chunk now; that command and
      // the ones after it travel with the continuation.
      const size_t sliced_at = b < budgets_.size() ? budgets_[b].sliced_at : SIZE_MAX;
      const size_t replied =
          std::min(sliced_at == SIZE_MAX ? SIZE_MAX : sliced_at + 1, batch.commands.size());
      size_t bytes = 0;
      for (size_t c = 0; c < replied; ++c) bytes += batch.commands[c].reply.size();
      completion.replies.reserve(bytes);
      for (size_t c = 0; c < replied; ++c) {
        PreparedCommand& command = batch.commands[c];
        if (c == sliced_at) {  // its first chunk; its metrics come with its last
          if (!command.reply_dropped) completion.replies += command.reply;
          command.reply = std::string();
          break;
        }
        const char* reply = command.reply.data();
        const size_t length = command.reply.size();
        command.nil_reply = IsNilReply(reply, length);
        if (length > 0 && reply[0] == '-') {
          command.failed = true;
          command.error_code = ErrorCode(reply, length);
        }
        if (!command.reply_dropped) completion.replies += command.reply;  // CLIENT REPLY
        command.reply = std::string();
      }
      completion.times = batch.times;
      if (sliced_at != SIZE_MAX) {
        completion.more = true;
        auto state = std::make_unique<SliceState>();
        state->server = server_;
        state->loop_index = loop_index_;
        state->conn_id = batch.conn_id;
        state->info = batch.info;
        state->read = std::move(budgets_[b].sink.deferred);
        state->command = std::move(batch.commands[sliced_at]);
        state->times = batch.times;
        for (size_t c = sliced_at + 1; c < batch.commands.size(); ++c) {
          state->rest.push_back(std::move(batch.commands[c]));
        }
        batch.commands.resize(sliced_at);
        continuations.push_back(std::move(state));
      }
      if (with_commands) completion.commands = std::move(batch.commands);
      completions.push_back(std::move(completion));
    }
    NetLoop* loop = server_->loop(loop_index_);
    // Done before the replies go: a client that has its reply finds the loop no longer counting
    // this group as running (NetLoop::PoolBehind; its next miss was read in the network thread
    // when it came before the worker got here).
    if (!handed_on_) loop->NoteGroupDone();
    loop->PostCompletions(std::move(completions));
    // After the partial completions are queued, so every later chunk is queued behind them.
    for (auto& state : continuations) SubmitSliceStep(std::move(state));
  }

  // MLFQ charging (server/group_charges.h): from the start of order_[k] on, time is charged to
  // k's batch.
  void ChargeFrom(size_t k) {
    if (!charge_) return;
    charges_.ChargeTo(static_cast<size_t>(budget_of_[k] - budgets_.data()), ChargeClock());
  }
  // Nanoseconds since the group started running, the clock of charges_.
  uint64_t ChargeClock() const { return Clock::NanosBetween(started_, Clock::Now()); }
  // Charges each batch its part of the group's time on the CPU: the split of charges_, scaled by
  // CPU / wall time of the whole run (a group preempted halfway is not charged the pause).
  void ChargeClients() {
    if (!charge_) return;
    charges_.Finish(ChargeClock());
    uint64_t wall = 0;
    for (uint64_t ns : charges_.spent()) wall += ns;
    const auto cpu = static_cast<uint64_t>(pool::WorkerPool::RunningTaskCpuNs());
    const double on_cpu = wall > 0 && cpu < wall ? static_cast<double>(cpu) / wall : 1.0;
    pool::WorkerPool* pool = server_->worker_pool();
    for (size_t b = 0; b < group_.size(); ++b) {
      const auto ns = static_cast<int64_t>(static_cast<double>(charges_.spent()[b]) * on_cpu);
      if (ns > 0) pool->Charge(group_[b].conn_id, ns);
    }
  }

  Server* const server_;
  const uint32_t loop_index_;
  std::vector<ConnBatch> group_;
  const bool charge_;
  const bool handed_on_;
  uint64_t started_ = 0;  // Clock ticks when Run began
  GroupCharges charges_;  // used when charge_
  std::vector<PreparedCommand*> order_;
  std::vector<BatchBudget> budgets_;     // one per batch of group_
  std::vector<BatchBudget*> budget_of_;  // the budget of each command of order_
  std::unique_ptr<storage::WriteGroup> write_group_;
  std::vector<PreparedCommand*> pending_;  // write commands since the last commit
  std::vector<size_t> pending_batches_;    // the batch (index in group_) of each
  FlatKeySet written_;                     // their keys (views into their argv)
  bool indexed_ = false;  // the segment reads through the write group's indexed overlay
  static constexpr size_t kMaxIndexedWrites = 128;           // write commands per indexed overlay
  static constexpr size_t kMaxRunCommands = 128;             // commands per write run
  static constexpr uint64_t kRunReplyRoom = 64ull << 20;     // JoinsRun's reply room
  WriteRun run_;                                             // RunWrites', reused
  std::vector<std::string_view> command_keys_;               // RunInSegment's, reused
  std::vector<uint32_t> window_stripes_;                     // WriteWindow's, reused
  std::vector<storage::ReadAheadKey> read_ahead_keys_;       // ReadAheadMisses', reused
  FlatKeySet written_in_segment_;                            // ReadAheadMisses', reused
  std::vector<std::string_view> segment_keys_;               // RunScripts', reused
  std::vector<std::pair<int, std::string>> script_written_;  // RunScripts', reused
};

}  // namespace

std::unique_ptr<pool::Task> MakeGroupTask(Server* server, uint32_t loop_index,
                                          std::vector<ConnBatch> group, bool charge_clients) {
  return std::make_unique<GroupTask>(server, loop_index, std::move(group), charge_clients);
}

}  // namespace rockcache::server
