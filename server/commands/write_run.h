// Helpers for the write-run handlers of the command rows (WriteRunSpec, server/commands/
// command.h): the pieces every run handler needs. Pure, any thread.
#pragma once

#include <string_view>
#include <vector>

#include "server/commands/command.h"
#include "server/protocol/reply.h"

namespace rockcache::server {

// argv[first..] of every command of the run, in order: the arguments of the one storage call.
inline std::vector<std::string_view> RunArgViews(const WriteRun& run, size_t first) {
  size_t count = 0;
  for (const Args* argv : run.argvs) count += argv->size() - first;
  std::vector<std::string_view> views;
  views.reserve(count);
  for (const Args* argv : run.argvs) {
    for (size_t i = first; i < argv->size(); ++i) views.emplace_back((*argv)[i]);
  }
  return views;
}

// The storage call failed: one by one, every command of the run would have failed the same way
// (the key's type and the store do not change between them).
inline void AppendStatusErrorToAll(const WriteRun& run, const Status& status) {
  for (std::string* reply : run.replies) AppendStatusError(reply, status);
}

// For SADD / HSET runs: each command's count of what it created, from the one storage call's
// per-argument flags (`created[i]` for the i-th of RunArgViews(run, 2), or of its pairs when
// `step` is 2). A member's first occurrence in the run is the one flagged, and it belongs to the
// first command naming it, which is the one that would have added it.
inline void AppendCreatedCounts(const WriteRun& run, const std::vector<uint8_t>& created,
                                size_t step) {
  size_t at = 0;
  for (size_t c = 0; c < run.argvs.size(); ++c) {
    int64_t count = 0;
    for (size_t i = 2; i + step - 1 < run.argvs[c]->size(); i += step) count += created[at++];
    AppendInteger(run.replies[c], count);
  }
}

}  // namespace rockcache::server
