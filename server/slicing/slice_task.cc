#include "server/slicing/slice_task.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>

#include "pool/worker_pool.h"
#include "server/clock.h"
#include "server/net_loop.h"
#include "server/server.h"

namespace rockcache::server {
namespace {

int64_t SteadyNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

class SliceTask : public pool::Task {
 public:
  explicit SliceTask(std::unique_ptr<SliceState> state) : state_(std::move(state)) {}

  void Run() override {
    SliceState& st = *state_;
    st.command.later_slices_queue_wait_ns +=
        static_cast<uint64_t>(std::max<int64_t>(0, SteadyNowNs() - st.submitted_ns));
    Server& server = *st.server;
    ClientInfo& info = *st.info;
    if (info.closed.load(std::memory_order_acquire)) return;  // dropped: the snapshot goes too
    const uint64_t hard =
        server.settings().client_output_buffer_limit.load(std::memory_order_relaxed);
    if (hard > 0 && info.pending_reply_bytes.load(std::memory_order_relaxed) +
                            info.slice_queued_bytes.load(std::memory_order_relaxed) >
                        hard) {
      return Close(/*over_limit=*/true);  // a reader too slow for its output-buffer limit
    }
    Completion completion;
    completion.conn_id = st.conn_id;
    bool complete = false;
    ReplyProtocolScope protocol(st.command.protocol);
    Status s = st.read->Step(server.settings(), &completion.replies, &complete);
    ++st.steps;
    st.command.slices = static_cast<uint32_t>(st.steps);
    server.stats().command_slices.fetch_add(1, std::memory_order_relaxed);
    if (s.IsOverLimit()) return Close(/*over_limit=*/true);  // a reply past the output limit
    if (!s.ok()) {
      spdlog::warn("closing client id={}: sliced read failed after its reply began: {}", st.conn_id,
                   s.ToString());
      return Close(/*over_limit=*/false);
    }
    if (st.command.reply_dropped) completion.replies.clear();  // CLIENT REPLY OFF/SKIP
    if (!complete && completion.replies.empty()) {  // nothing to send yet (a scan's items)
      SubmitSliceStep(std::move(state_));
      return;
    }
    completion.slice_bytes = completion.replies.size();
    info.slice_queued_bytes.fetch_add(completion.slice_bytes, std::memory_order_relaxed);
    NetLoop* loop = server.loop(st.loop_index);
    if (!complete) {
      completion.more = true;
      loop->PostCompletion(std::move(completion));
      SubmitSliceStep(std::move(state_));
      return;
    }
    if (st.times.parsed != 0) st.command.exec_end = Clock::Now();
    completion.commands.push_back(std::move(st.command));
    completion.rest = std::move(st.rest);
    completion.times = st.times;
    loop->PostCompletion(std::move(completion));
  }

  // The pool is shutting down: the reply cannot be finished; the client is closed.
  void Cancel() override { Close(/*over_limit=*/false); }

 private:
  void Close(bool over_limit) {
    Completion completion;
    completion.conn_id = state_->conn_id;
    if (over_limit) {
      completion.close_client = true;  // logged by the loop as Redis logs it
    } else {
      completion.kind = Completion::Kind::kClose;
    }
    state_->server->loop(state_->loop_index)->PostCompletion(std::move(completion));
  }

  std::unique_ptr<SliceState> state_;
};

}  // namespace

void SubmitSliceStep(std::unique_ptr<SliceState> state) {
  const uint64_t client = state->conn_id;
  pool::WorkerPool* pool = state->server->worker_pool();
  state->submitted_ns = SteadyNowNs();
  auto next = std::make_unique<SliceTask>(std::move(state));
  next->set_client(client);
  next->set_elapsed_ns(pool::WorkerPool::RunningTaskElapsedNs());  // the command's time so far
  pool->Submit(std::move(next), client);
}

}  // namespace rockcache::server
