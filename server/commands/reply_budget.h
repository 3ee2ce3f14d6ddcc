// The reply budget: how many reply bytes a batch of commands may still produce before its client
// passes client-output-buffer-limit (the normal class's hard limit). Header-only; worker threads.
//
// The network thread computes it when it submits a batch: the hard limit minus what the
// connection already has pending. The batch's commands append to one buffer, so the budget is
// on that buffer's size and is shared by them. A command whose reply can be large checks it
// while it builds: it passes ReplyRoom() as the max_bytes of its storage read (storage stops
// materializing past it, see storage/result_bytes.h) and calls ReplyOverBudget() after reading and
// while appending. Past the budget the command stops and appends nothing more; the batch stops, its
// replies are dropped and the client is closed, as Redis closes a client over its output-buffer
// limit ("scheduled to be closed ASAP for overcoming of output buffer limits", no reply).
// Peak memory for the reply thus stays within the limit plus one storage item plus the reply
// bytes of one item.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>

#include "config/status.h"
#include "server/commands/command.h"

namespace rockcache::server {

struct ReplyBudget {
  size_t max_out = std::numeric_limits<size_t>::max();  // `out` may not grow past this size
  bool exceeded = false;  // a command stopped at the budget: the client is to be closed
};

// Bytes `out` may still grow by (unlimited without a budget): a storage read's max_bytes.
inline uint64_t ReplyRoom(const CommandContext& ctx, const std::string& out) {
  if (ctx.reply_budget == nullptr) return std::numeric_limits<uint64_t>::max();
  size_t max_out = ctx.reply_budget->max_out;
  return out.size() >= max_out ? 0 : max_out - out.size();
}

// True, and the budget marked exceeded, when `out` (plus `more` bytes about to be appended) has
// passed the budget or `status` is a storage read's OverLimit. The caller then returns at once.
inline bool ReplyOverBudget(CommandContext& ctx, const std::string& out, const Status& status,
                            size_t more = 0) {
  if (ctx.reply_budget == nullptr) return false;
  if (status.IsOverLimit() || out.size() + more > ctx.reply_budget->max_out) {
    ctx.reply_budget->exceeded = true;
    return true;
  }
  return false;
}
inline bool ReplyOverBudget(CommandContext& ctx, const std::string& out, size_t more = 0) {
  return ReplyOverBudget(ctx, out, Status::OK(), more);
}

}  // namespace rockcache::server
