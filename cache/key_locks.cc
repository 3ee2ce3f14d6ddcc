#include "cache/key_locks.h"

#include <algorithm>

#include "cache/hash.h"

namespace rockcache::cache {

KeyLocks::KeyLocks(size_t stripes)
    : count_(stripes == 0 ? 1 : stripes), stripes_(new Stripe[count_]) {}

size_t KeyLocks::StripeOf(std::string_view key) const {
  const uint64_t h = HashKey(key);
  const uint64_t rotated = (h >> 48) | (h << 16);
  return static_cast<size_t>(rotated % count_);
}

void KeyLocks::LockStripe(uint32_t index) {
  std::mutex& mu = stripes_[index].mu;
  if (mu.try_lock()) return;
  contended_.fetch_add(1, std::memory_order_relaxed);
  mu.lock();
}

KeyLocks::Guard KeyLocks::Lock(std::string_view key) {
  Guard guard;
  const auto stripe = static_cast<uint32_t>(StripeOf(key));
  LockStripe(stripe);
  guard.owner_ = this;
  guard.stripes_.push_back(stripe);
  return guard;
}

KeyLocks::Guard KeyLocks::TryLockStripe(uint32_t stripe) {
  Guard guard;
  if (!stripes_[stripe].mu.try_lock()) return guard;
  guard.owner_ = this;
  guard.stripes_.push_back(stripe);
  return guard;
}

KeyLocks::Guard KeyLocks::LockAll() {
  Guard guard;
  guard.stripes_.reserve(count_);
  for (size_t i = 0; i < count_; ++i) guard.stripes_.push_back(static_cast<uint32_t>(i));
  for (uint32_t stripe : guard.stripes_) LockStripe(stripe);
  guard.owner_ = this;
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
  for (uint32_t stripe : guard.stripes_) LockStripe(stripe);
  guard.owner_ = this;
  return guard;
}

KeyLocks::Guard::Guard(Guard&& other) noexcept
    : owner_(other.owner_), stripes_(std::move(other.stripes_)) {
  other.owner_ = nullptr;
  other.stripes_.clear();
}

KeyLocks::Guard& KeyLocks::Guard::operator=(Guard&& other) noexcept {
  if (this != &other) {
    Unlock();
    owner_ = other.owner_;
    stripes_ = std::move(other.stripes_);
    other.owner_ = nullptr;
    other.stripes_.clear();
  }
  return *this;
}

void KeyLocks::Guard::Unlock() {
  if (owner_ == nullptr) return;
  for (auto it = stripes_.rbegin(); it != stripes_.rend(); ++it) owner_->stripes_[*it].mu.unlock();
  owner_ = nullptr;
  stripes_.clear();
}

}  // namespace rockcache::cache
