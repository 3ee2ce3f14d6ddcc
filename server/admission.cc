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
    // Only while the batch holds reads: a read behind a write of this connection must see it.
    if (state.batch_reads_only) return Route::kCacheBehindBatch;
  }
  if ((flags & kAnywhere) && state.batch_empty) return Route::kLoop;
  if (flags & kMayBlock) return state.batch_empty ? Route::kBlocking : Route::kAfterBatch;
  return Route::kPool;
}

}  // namespace rockcache::server
