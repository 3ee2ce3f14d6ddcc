#include "server/admission.h"

#include "server/pubsub/subscriptions.h"

namespace rockcache::server {

Route Admit(const CommandSpec* spec, size_t argc, const AdmissionState& state) {
  if (spec == nullptr) return Route::kUnknownCommand;
  if (!ArityOk(*spec, argc)) return Route::kWrongArity;
  if (!state.authenticated && !(spec->flags & kNoAuth)) return Route::kNoAuth;
  if (state.subscribed && SubscribedModeAnswers(*spec, argc)) return Route::kSubscribedReply;
  const uint32_t flags = spec->flags;
  if (flags & kConnection) return state.batch_empty ? Route::kLoop : Route::kAfterBatch;
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
