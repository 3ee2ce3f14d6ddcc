#include "server/admission.h"

#include <strings.h>

#include <string_view>

#include "server/pubsub/subscriptions.h"

namespace rockcache::server {

bool InLoopSubcommand(const CommandSpec* spec, const Args& argv) {
  if (spec == nullptr || spec->loop_subcommands == nullptr || argv.size() < 2) return false;
  std::string_view list = spec->loop_subcommands;
  while (!list.empty()) {
    const size_t bar = list.find('|');
    const std::string_view name = list.substr(0, bar);
    if (name.size() == argv[1].size() &&
        strncasecmp(name.data(), argv[1].data(), name.size()) == 0) {
      return true;
    }
    if (bar == std::string_view::npos) break;
    list.remove_prefix(bar + 1);
  }
  return false;
}

Route Admit(const CommandSpec* spec, size_t argc, const AdmissionState& state) {
  if (spec == nullptr) return Route::kUnknownCommand;
  if (!ArityOk(*spec, argc)) return Route::kWrongArity;
  if (!state.authenticated && !(spec->flags & kNoAuth)) return Route::kNoAuth;
  if (state.subscribed && SubscribedModeAnswers(*spec, argc)) return Route::kSubscribedReply;
  const uint32_t flags = spec->flags;
  if ((flags & kConnection) || state.loop_subcommand) {
    return state.batch_empty ? Route::kLoop : Route::kAfterBatch;
  }
  if ((flags & kCacheRead) && state.rtc_reads) {
    if (state.batch_empty) return Route::kCache;
    // Not behind a write of this connection to its keys (or to keys not known up front): the
    // read must see that write.
    if (state.batch_spares_keys) return Route::kCacheBehindBatch;
  }
  if ((flags & kAnywhere) && state.batch_empty) return Route::kLoop;
  if (flags & kMayBlock) return state.batch_empty ? Route::kBlocking : Route::kAfterBatch;
  return Route::kPool;
}

}  // namespace rockcache::server
