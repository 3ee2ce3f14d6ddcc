#include "cache/key_locks.h"

#include <algorithm>

#include "cache/hash.h"

#ifdef ROCKCACHE_KEY_LOCKS_TSAN
#include <sanitizer/tsan_interface.h>

#include <chrono>
#include <thread>
#endif

namespace rockcache::cache {

// TSan. The deadlock detector keeps at most 64 held mutexes per thread (a CHECK aborts the
// process past that), and its lock graph has 4096 nodes: 4096 stripe mutexes, all held by
// LockAll, cannot be shown to it one by one. So, in the TSan build only:
// - A stripe is a StripeMutex, an atomic flag: TSan follows its acquire/release like any atomic
//   but does not count it as a mutex, so neither limit applies.
// - The detector is shown one lock per KeyLocks, "key stripes", through TSan's mutex annotation
//   interface (sanitizer/tsan_interface.h): a guard of Lock/TryLockStripe holds it shared, a
//   LockAll guard exclusive (as LockAll excludes every other holder). A cycle through any stripe
//   and another mutex (a stripe then a registry's mutex on one thread, the registry's mutex then
//   a stripe on another) is reported as it would be with real stripe mutexes; the order among the
//   stripes themselves is not checked (one Lock call sorts them: ascending by construction).
// - The annotations are made once the stripes are actually held and before they are let go, so
//   TSan's view of "key stripes" never shows an exclusive and a shared holder at once; the
//   atomics touched in between are ignored by TSan, so each stripe's own happens-before edge is
//   given explicitly (__tsan_acquire / __tsan_release on the stripe).
// Nothing of this is compiled into other builds: there the annotation hooks are empty and
// inlined, and a stripe is the std::mutex it always was.
#ifdef ROCKCACHE_KEY_LOCKS_TSAN
namespace {
constexpr unsigned kReadLock = __tsan_mutex_read_lock;
}  // namespace

bool KeyLocks::StripeMutex::try_lock() {
  return !held_.load(std::memory_order_relaxed) && !held_.exchange(true, std::memory_order_acquire);
}

void KeyLocks::StripeMutex::lock() {
  for (int spins = 0; !try_lock(); ++spins) {
    if (spins < 64) {
      std::this_thread::yield();
    } else {  // held across a RocksDB read or write: sleep instead of burning the core
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }
}

void KeyLocks::StripeMutex::unlock() { held_.store(false, std::memory_order_release); }

void KeyLocks::AnnotateBeforeLock(bool all, bool try_lock) {
  __tsan_mutex_pre_lock(this, (all ? 0 : kReadLock) | (try_lock ? __tsan_mutex_try_lock : 0));
}

void KeyLocks::AnnotateAfterLock(const Guard& guard, bool all, bool try_lock) {
  unsigned flags = (all ? 0 : kReadLock) | (try_lock ? __tsan_mutex_try_lock : 0);
  if (!guard.owns_lock()) flags |= __tsan_mutex_try_lock_failed;
  __tsan_mutex_post_lock(this, flags, 0);
  for (uint32_t stripe : guard.stripes_) __tsan_acquire(&stripes_[stripe].mu);
}

void KeyLocks::AnnotateBeforeUnlock(const Guard& guard) {
  for (uint32_t stripe : guard.stripes_) __tsan_release(&stripes_[stripe].mu);
  __tsan_mutex_pre_unlock(this, guard.all_ ? 0 : kReadLock);
}

void KeyLocks::AnnotateAfterUnlock(bool all) {
  __tsan_mutex_post_unlock(this, all ? 0 : kReadLock);
}

KeyLocks::KeyLocks(size_t stripes)
    : count_(stripes == 0 ? 1 : stripes), stripes_(new Stripe[count_]) {
  __tsan_mutex_create(this, __tsan_mutex_not_static | __tsan_mutex_read_reentrant);
}

KeyLocks::~KeyLocks() { __tsan_mutex_destroy(this, __tsan_mutex_not_static); }
#else
void KeyLocks::AnnotateBeforeLock(bool, bool) {}
void KeyLocks::AnnotateAfterLock(const Guard&, bool, bool) {}
void KeyLocks::AnnotateBeforeUnlock(const Guard&) {}
void KeyLocks::AnnotateAfterUnlock(bool) {}

KeyLocks::KeyLocks(size_t stripes)
    : count_(stripes == 0 ? 1 : stripes), stripes_(new Stripe[count_]) {}

KeyLocks::~KeyLocks() = default;
#endif

size_t KeyLocks::StripeOf(std::string_view key) const {
  const uint64_t h = HashKey(key);
  const uint64_t rotated = (h >> 48) | (h << 16);
  return static_cast<size_t>(rotated % count_);
}

void KeyLocks::LockStripe(uint32_t index) {
  StripeMutex& mu = stripes_[index].mu;
  if (mu.try_lock()) return;
  contended_.fetch_add(1, std::memory_order_relaxed);
  mu.lock();
}

KeyLocks::Guard KeyLocks::Lock(std::string_view key) {
  Guard guard;
  const auto stripe = static_cast<uint32_t>(StripeOf(key));
  AnnotateBeforeLock(/*all=*/false, /*try_lock=*/false);
  LockStripe(stripe);
  guard.owner_ = this;
  guard.stripes_.push_back(stripe);
  AnnotateAfterLock(guard, /*all=*/false, /*try_lock=*/false);
  return guard;
}

KeyLocks::Guard KeyLocks::TryLockStripe(uint32_t stripe) {
  Guard guard;
  AnnotateBeforeLock(/*all=*/false, /*try_lock=*/true);
  if (stripes_[stripe].mu.try_lock()) {
    guard.owner_ = this;
    guard.stripes_.push_back(stripe);
  }
  AnnotateAfterLock(guard, /*all=*/false, /*try_lock=*/true);
  return guard;
}

KeyLocks::Guard KeyLocks::LockAll() {
  Guard guard;
  guard.stripes_.reserve(count_);
  for (size_t i = 0; i < count_; ++i) guard.stripes_.push_back(static_cast<uint32_t>(i));
  AnnotateBeforeLock(/*all=*/true, /*try_lock=*/false);
  for (uint32_t stripe : guard.stripes_) LockStripe(stripe);
  guard.owner_ = this;
#ifdef ROCKCACHE_KEY_LOCKS_TSAN
  guard.all_ = true;
#endif
  AnnotateAfterLock(guard, /*all=*/true, /*try_lock=*/false);
  return guard;
}

std::vector<uint32_t> KeyLocks::StripesOf(const std::vector<std::string_view>& keys) const {
  std::vector<uint32_t> stripes;
  StripesOf(keys, &stripes);
  return stripes;
}

void KeyLocks::StripesOf(const std::vector<std::string_view>& keys,
                         std::vector<uint32_t>* out) const {
  out->clear();
  out->reserve(keys.size());
  for (std::string_view key : keys) out->push_back(static_cast<uint32_t>(StripeOf(key)));
  std::sort(out->begin(), out->end());
  out->erase(std::unique(out->begin(), out->end()), out->end());
}

void KeyLocks::BeginWrite(const std::vector<uint32_t>& stripes) {
  for (uint32_t i : stripes) {
    std::atomic<uint64_t>& seq = stripes_[i].seq;
    seq.store(seq.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
  // The odd values must be visible before any cache change of this write: the cache shard's
  // mutex release that publishes the change orders them for a reader that sees the change.
  std::atomic_thread_fence(std::memory_order_release);
}

void KeyLocks::EndWrite(const std::vector<uint32_t>& stripes) {
  for (uint32_t i : stripes) {
    std::atomic<uint64_t>& seq = stripes_[i].seq;
    seq.store(seq.load(std::memory_order_relaxed) + 1, std::memory_order_release);
  }
}

KeyLocks::WriteWindow::WriteWindow(KeyLocks& locks, const std::vector<uint32_t>* stripes)
    : locks_(&locks), borrowed_(stripes) {
  locks_->BeginWrite(*borrowed_);
}

KeyLocks::WriteWindow::WriteWindow(KeyLocks& locks, std::vector<uint32_t>&& stripes)
    : locks_(&locks), owned_(std::move(stripes)) {
  locks_->BeginWrite(owned_);
}

KeyLocks::WriteWindow::WriteWindow(WriteWindow&& other) noexcept
    : locks_(other.locks_), borrowed_(other.borrowed_), owned_(std::move(other.owned_)) {
  other.locks_ = nullptr;
  other.borrowed_ = nullptr;
}

KeyLocks::WriteWindow& KeyLocks::WriteWindow::operator=(WriteWindow&& other) noexcept {
  if (this != &other) {
    Close();
    locks_ = other.locks_;
    borrowed_ = other.borrowed_;
    owned_ = std::move(other.owned_);
    other.locks_ = nullptr;
    other.borrowed_ = nullptr;
  }
  return *this;
}

void KeyLocks::WriteWindow::Close() {
  if (locks_ == nullptr) return;
  locks_->EndWrite(stripes());
  locks_ = nullptr;
}

KeyLocks::Guard KeyLocks::Lock(const std::vector<std::string_view>& keys) {
  Guard guard;
  if (keys.empty()) return guard;
  guard.stripes_ = StripesOf(keys);
  AnnotateBeforeLock(/*all=*/false, /*try_lock=*/false);
  for (uint32_t stripe : guard.stripes_) LockStripe(stripe);
  guard.owner_ = this;
  AnnotateAfterLock(guard, /*all=*/false, /*try_lock=*/false);
  return guard;
}

KeyLocks::Guard::Guard(Guard&& other) noexcept
    : owner_(other.owner_), stripes_(std::move(other.stripes_)) {
#ifdef ROCKCACHE_KEY_LOCKS_TSAN
  all_ = other.all_;
#endif
  other.owner_ = nullptr;
  other.stripes_.clear();
}

KeyLocks::Guard& KeyLocks::Guard::operator=(Guard&& other) noexcept {
  if (this != &other) {
    Unlock();
    owner_ = other.owner_;
    stripes_ = std::move(other.stripes_);
#ifdef ROCKCACHE_KEY_LOCKS_TSAN
    all_ = other.all_;
#endif
    other.owner_ = nullptr;
    other.stripes_.clear();
  }
  return *this;
}

void KeyLocks::Guard::Unlock() {
  if (owner_ == nullptr) return;
  owner_->AnnotateBeforeUnlock(*this);
  for (auto it = stripes_.rbegin(); it != stripes_.rend(); ++it) owner_->stripes_[*it].mu.unlock();
#ifdef ROCKCACHE_KEY_LOCKS_TSAN
  owner_->AnnotateAfterUnlock(all_);
#else
  owner_->AnnotateAfterUnlock(false);
#endif
  owner_ = nullptr;
  stripes_.clear();
}

}  // namespace rockcache::cache
