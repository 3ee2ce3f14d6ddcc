// SkipListMemTable: see memtable_rep.h for what it is and why.
#include "storage/memtable_rep.h"

#include <rocksdb/memtablerep.h>
#include <rocksdb/slice.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>

#include "storage/huge_page_chunks.h"

// rocksdb::Arena::AllocateAligned(size_t bytes, size_t huge_page_size, Logger* logger), called as
// the free function it compiles to (the object first). Not in librocksdb's public headers; see
// memtable_rep.h.
char* RocksArenaAllocateAligned(
    rocksdb::Arena* arena, size_t bytes, size_t huge_page_size,
    rocksdb::Logger* logger) __asm__("_ZN7rocksdb5Arena15AllocateAlignedEmmPNS_6LoggerE");

namespace rockcache::storage {

const char* MemTableKeyOf(const rocksdb::LookupKey& key) {
  // db/lookup_key.h (RocksDB 7.8, as LevelDB's): `const char* start_` (the memtable key),
  // `kstart_`, `end_`, `char space_[200]`; memtable_key() is inline, so it is read here.
  return *reinterpret_cast<const char* const*>(&key);
}

namespace {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "RocksDB's fixed64 is little-endian");

std::atomic<bool> g_check_comparisons{false};

constexpr int kMaxHeight = 12;  // 4^12 entries before the top level grows crowded
constexpr uint32_t kBranching = 4;

// The internal key of an entry (after its varint32 length).
inline rocksdb::Slice EntryKey(const char* entry) {
  const auto* p = reinterpret_cast<const unsigned char*>(entry);
  uint32_t length = 0;
  for (int shift = 0; shift <= 28; shift += 7) {
    const uint32_t byte = *p++;
    length |= (byte & 127) << shift;
    if (byte < 128) break;
  }
  return rocksdb::Slice(reinterpret_cast<const char*>(p), length);
}

// memcmp's order of two n-byte strings, inline: 8 bytes at a time (most keys differ within the
// first 16 or 24 bytes; a call to libc's memcmp was ~10% of an insert). Starts at byte `from`:
// REQUIRES the first `from` bytes equal (from <= n). Sets *same to a count of leading bytes
// known equal: the start of the word that differs, or n.
inline int CompareBytes(const char* a, const char* b, size_t n, size_t from, size_t* same) {
  size_t i = from;
  for (; i + 8 <= n; i += 8) {
    uint64_t x = 0;
    uint64_t y = 0;
    std::memcpy(&x, a + i, 8);
    std::memcpy(&y, b + i, 8);
    if (x != y) {
      *same = i;
      return __builtin_bswap64(x) < __builtin_bswap64(y) ? -1 : 1;
    }
  }
  for (; i < n; ++i) {
    if (a[i] != b[i]) {
      *same = i;
      return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[i]) ? -1 : 1;
    }
  }
  *same = n;
  return 0;
}

// MemTable::KeyComparator's order for bytewise user keys: user key, then sequence descending.
// `from` and *same as in CompareBytes, over the user keys (REQUIRES: from <= both sizes).
inline int CompareInternalKeys(const rocksdb::Slice& a, const rocksdb::Slice& b, size_t from,
                               size_t* same) {
  const size_t user_a = a.size() - 8;
  const size_t user_b = b.size() - 8;
  const size_t common = std::min(user_a, user_b);
  int r = CompareBytes(a.data(), b.data(), common, from, same);
  if (r != 0) return r;
  if (user_a != user_b) return user_a < user_b ? -1 : 1;
  uint64_t trailer_a = 0;
  uint64_t trailer_b = 0;
  std::memcpy(&trailer_a, a.data() + user_a, 8);
  std::memcpy(&trailer_b, b.data() + user_b, 8);
  const uint64_t seq_a = trailer_a >> 8;
  const uint64_t seq_b = trailer_b >> 8;
  if (seq_a == seq_b) return 0;
  return seq_a > seq_b ? -1 : 1;
}

inline int Sign(int r) { return (r > 0) - (r < 0); }

[[noreturn]] void ComparisonMismatch(int ours, int rocks) {
  std::fprintf(stderr, "memtable_rep: key order disagrees with RocksDB's (%d vs %d)\n", ours,
               rocks);
  std::abort();
}

// A node: its height, then its entry; its links, next[0] (every entry) up to next[height - 1],
// come before it in the same allocation, next[0] nearest. A search step loads a node to compare
// its key and, when it moves on, the link at its level: with the links before the header, the
// key starts right after the node's address (no pointer to follow) and next[0] sits beside it,
// so a short node is one cache line.
struct Node {
  int height;

  std::atomic<Node*>* Link(int level) {
    return reinterpret_cast<std::atomic<Node*>*>(this) - 1 - level;
  }
  const std::atomic<Node*>* Link(int level) const {
    return reinterpret_cast<const std::atomic<Node*>*>(this) - 1 - level;
  }
  const char* Entry() const { return reinterpret_cast<const char*>(this + 1); }
  Node* Next(int level) const { return Link(level)->load(std::memory_order_acquire); }
  void SetNext(int level, Node* next) { Link(level)->store(next, std::memory_order_release); }
};

// The search path of one insert: at each level, the nodes the entry went between.
struct Splice {
  int height = 0;  // levels of prev/next that are set; 0: none yet
  Node* prev[kMaxHeight + 1] = {};
  Node* next[kMaxHeight + 1] = {};
};

// A hash of an internal key's user key (the key without its 8-byte trailer).
inline uint64_t UserKeyHash(const rocksdb::Slice& internal_key) {
  const size_t n = internal_key.size() - 8;
  const char* p = internal_key.data();
  uint64_t h = 0x9e3779b97f4a7c15ull ^ n;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w = 0;
    std::memcpy(&w, p + i, 8);
    h = (h ^ w) * 0xff51afd7ed558ccdull;
    h ^= h >> 32;
  }
  uint64_t tail = 0;
  std::memcpy(&tail, p + i, n - i);
  h = (h ^ tail) * 0xc4ceb9fe1a85ec53ull;
  return h ^ (h >> 29);
}

// The search paths of this thread's latest point reads, by user key. A write of a key the writer
// has just read (the meta read before every write, a read-modify-write such as INCR) goes where
// the read ended: a new version of a user key sorts right before the versions the read saw (its
// sequence number is larger), so the read's path brackets the entry and the insert starts from
// it instead of searching again from the top (~2 cache misses instead of ~20 in a memtable of a
// million entries). A path is a hint: Insert checks every level it uses, so a stale or
// mismatched one costs a few comparisons, never a misplaced node. Per thread (no sharing): RocksDB
// inserts on the thread that leads the write group, which is the thread that read when one
// worker executes and commits a group (paths of other threads' reads are simply not found).
struct ReadPath {
  uint64_t list = 0;      // the list's id (SkipListMemTable::id_); 0: empty
  uint64_t key_hash = 0;  // UserKeyHash of the key read
  uint64_t inserts = 0;   // the list's insert count when the read ran
  Splice path;
};
constexpr size_t kReadPaths = 64;  // a write group's reads (a few dozen keys) fit
thread_local ReadPath tls_read_paths[kReadPaths];
// Tests (storage/memtable_rep.h): this thread's inserts that started from a read's path, and its
// key comparisons.
thread_local uint64_t tls_inserts_from_read_path = 0;
thread_local uint64_t tls_comparisons = 0;

class SkipListMemTable;

class SkipListIterator final : public rocksdb::MemTableRep::Iterator {
 public:
  explicit SkipListIterator(const SkipListMemTable* list) : list_(list) {}
  bool Valid() const override { return node_ != nullptr; }
  const char* key() const override { return node_->Entry(); }
  void Next() override { node_ = node_->Next(0); }
  void Prev() override;
  void Seek(const rocksdb::Slice& internal_key, const char* memtable_key) override;
  void SeekForPrev(const rocksdb::Slice& internal_key, const char* memtable_key) override;
  void SeekToFirst() override;
  void SeekToLast() override;

 private:
  const SkipListMemTable* const list_;
  Node* node_ = nullptr;
};

class SkipListMemTable final : public rocksdb::MemTableRep {
 public:
  SkipListMemTable(const KeyComparator& compare, rocksdb::Allocator* allocator, bool bytewise,
                   bool huge_pages, bool prefix_skip)
      : MemTableRep(allocator),
        compare_(compare),
        bytewise_(bytewise),
        prefix_skip_(bytewise && prefix_skip),
        huge_pages_(huge_pages) {
    // Published with release: a reader's first acquire load of head_ sees everything the
    // constructor wrote (RocksDB's own hand-over of the memtable is invisible to TSan).
    head_.store(NewNode(kMaxHeight, 0, nullptr), std::memory_order_release);
  }

  rocksdb::KeyHandle Allocate(const size_t len, char** buf) override {
    // On whichever thread leads RocksDB's write group, maybe not the one that built the list:
    // the acquire load of head_ orders what NewNode reads (huge_pages_, the chunks) after the
    // constructor for TSan, as every read path's first load of head_ does.
    (void)head_.load(std::memory_order_acquire);
    return NewNode(RandomHeight(), len, buf);
  }
  void Insert(rocksdb::KeyHandle handle) override { (void)InsertKey(handle); }
  bool InsertKey(rocksdb::KeyHandle handle) override {
    std::lock_guard<std::mutex> lock(writer_);
    auto* x = static_cast<Node*>(handle);
    Splice* read_path = TakeReadPath(x);
    return Insert(x, read_path != nullptr ? read_path : &splice_);
  }
  void InsertWithHint(rocksdb::KeyHandle handle, void** hint) override {
    (void)InsertKeyWithHint(handle, hint);
  }
  bool InsertKeyWithHint(rocksdb::KeyHandle handle, void** hint) override {
    std::lock_guard<std::mutex> lock(writer_);
    auto* splice = static_cast<Splice*>(*hint);
    if (splice == nullptr) {
      char* raw = nullptr;
      MemTableRep::Allocate(sizeof(Splice) + alignof(Splice) - 1, &raw);
      splice = new (Align(raw, alignof(Splice))) Splice();
      *hint = splice;
    }
    auto* x = static_cast<Node*>(handle);
    Splice* read_path = TakeReadPath(x);
    return Insert(x, read_path != nullptr ? read_path : splice);
  }

  // RocksDB's default Get leaks the iterator it reads with (operator new, never deleted: seen
  // with ASan, 24 bytes a point read the memtable's bloom filter lets through); this one reads
  // the list directly. It takes the memtable key (varint32 length, internal key) from the
  // LookupKey's first member: see MemTableKeyOf.
  //
  // The read's search path is kept for an insert of the same user key on this thread (ReadPath).
  void Get(const rocksdb::LookupKey& k, void* callback_args,
           bool (*callback_func)(void* arg, const char* entry)) override {
    const rocksdb::Slice key = EntryKey(MemTableKeyOf(k));
    const uint64_t hash = UserKeyHash(key);
    ReadPath& slot = tls_read_paths[hash % kReadPaths];
    slot.list = id_;
    slot.key_hash = hash;
    slot.inserts = inserts_.load(std::memory_order_relaxed);
    for (Node* x = FindPath(key, &slot.path);
         x != nullptr && callback_func(callback_args, x->Entry()); x = x->Next(0)) {
    }
  }

  bool Contains(const char* entry) const override {
    const rocksdb::Slice key = EntryKey(entry);
    Node* x = FindGreaterOrEqual(key);
    return x != nullptr && Compare(x->Entry(), key) == 0;
  }
  // The chunks' bytes; the rest of the list is in the arena, which RocksDB counts itself.
  size_t ApproximateMemoryUsage() override { return chunks_.MappedBytes(); }

  Iterator* GetIterator(rocksdb::Arena* arena) override {
    if (arena == nullptr) return new SkipListIterator(this);
    // Only the destructor is called on an iterator in an arena (as RocksDB's own do).
    void* memory = RocksArenaAllocateAligned(arena, sizeof(SkipListIterator), 0, nullptr);
    return new (memory) SkipListIterator(this);
  }

  // Reads (any thread). Compare(entry, key): the order of an entry and an internal key. Inlined
  // into every search loop (an insert makes ~30 comparisons; GCC otherwise calls out of line
  // for all but the !bytewise_ test).
  //
  // Prefix skipping: keys between two nodes share every byte the two share, so a search that
  // knows how many leading bytes of `key` equal those of the nodes on either side of the range
  // it walks compares from the smaller count on (`from`); *same returns the count for `entry`
  // (a lower bound; 0 with a custom comparator). The entries of one collection share a prefix
  // [u32 len][key][u64 version] (storage/encoding.h) that a plain comparison reads again at
  // every step.
  [[gnu::always_inline]] int Compare(const char* entry, const rocksdb::Slice& key) const {
    size_t same = 0;
    return Compare(entry, key, 0, &same);
  }
  [[gnu::always_inline]] int Compare(const char* entry, const rocksdb::Slice& key, size_t from,
                                     size_t* same) const {
    ++tls_comparisons;
    if (!bytewise_) {
      *same = 0;
      return compare_(entry, key);
    }
    const int r = CompareInternalKeys(EntryKey(entry), key, from, same);
    if (g_check_comparisons.load(std::memory_order_relaxed)) {
      const int rocks = compare_(entry, key);
      if (Sign(r) != Sign(rocks)) ComparisonMismatch(r, rocks);
    }
    return r;
  }
  // A search at `level` that stops at x goes on at x's next node one level down: load that
  // node while the next one at this level is compared (each is a cache miss in a large list).
  static void PrefetchBelow(const Node* x, int level) {
    if (level > 0) __builtin_prefetch(x->Link(level - 1)->load(std::memory_order_relaxed));
  }
  // The first node at or after `key`, or nullptr.
  Node* FindGreaterOrEqual(const rocksdb::Slice& key) const {
    // head_ (acquire) before prefix_skip_: that load orders a reader after the constructor for
    // TSan (see the constructor), the constant members included.
    Node* head = head_.load(std::memory_order_acquire);
    return prefix_skip_ ? FindGreaterOrEqual<true, false>(key, head, nullptr)
                        : FindGreaterOrEqual<false, false>(key, head, nullptr);
  }
  // The same, setting *path to the search path (every level of the list's height).
  Node* FindPath(const rocksdb::Slice& key, Splice* path) const {
    Node* head = head_.load(std::memory_order_acquire);
    return prefix_skip_ ? FindGreaterOrEqual<true, true>(key, head, path)
                        : FindGreaterOrEqual<false, true>(key, head, path);
  }
  template <bool kPrefixSkip, bool kPath>
  Node* FindGreaterOrEqual(const rocksdb::Slice& key, Node* head, Splice* path) const {
    Node* x = head;
    int level = max_height_.load(std::memory_order_relaxed) - 1;
    if constexpr (kPath) {
      path->height = level + 1;
      path->prev[level + 1] = head;
      path->next[level + 1] = nullptr;
    }
    Node* known_after = nullptr;  // a node already compared as >= key at a level above
    size_t x_same = 0;            // leading bytes of key known equal to x's (prefix skipping)
    size_t after_same = 0;        // ... and to known_after's (0: none)
    while (true) {
      Node* next = x->Next(level);
      PrefetchBelow(x, level);
      size_t same = 0;
      const int r =
          (next == nullptr || next == known_after)
              ? 1
              : Compare(next->Entry(), key, kPrefixSkip ? std::min(x_same, after_same) : 0, &same);
      if (r < 0) {
        x = next;
        if constexpr (kPrefixSkip) x_same = same;
        continue;
      }
      if constexpr (kPath) {
        path->prev[level] = x;
        path->next[level] = next;
      }
      if ((!kPath && r == 0) || level == 0) {
        return next;
      } else {
        if constexpr (kPrefixSkip) {
          if (next != known_after) after_same = next == nullptr ? 0 : same;
        }
        known_after = next;
        --level;
      }
    }
  }
  // The last node before `key`, or nullptr.
  Node* FindLessThan(const rocksdb::Slice& key) const {
    Node* const head = head_.load(std::memory_order_acquire);
    Node* x = head;
    int level = max_height_.load(std::memory_order_relaxed) - 1;
    Node* known_after = nullptr;
    while (true) {
      Node* next = x->Next(level);
      PrefetchBelow(x, level);
      if (next != nullptr && next != known_after && Compare(next->Entry(), key) < 0) {
        x = next;
      } else if (level == 0) {
        return x == head ? nullptr : x;
      } else {
        known_after = next;
        --level;
      }
    }
  }
  Node* First() const { return head_.load(std::memory_order_acquire)->Next(0); }
  Node* Last() const {
    Node* const head = head_.load(std::memory_order_acquire);
    Node* x = head;
    int level = max_height_.load(std::memory_order_relaxed) - 1;
    while (true) {
      Node* next = x->Next(level);
      if (next != nullptr) {
        x = next;
      } else if (level == 0) {
        return x == head ? nullptr : x;
      } else {
        --level;
      }
    }
  }

 private:
  static char* Align(char* p, size_t alignment) {
    const auto address = reinterpret_cast<uintptr_t>(p);
    return p + ((alignment - address % alignment) % alignment);
  }

  // `bytes` for a node, aligned for its links: from the chunks once the arena has given the list
  // kArenaNodeBytes (a memtable that stays small, as most column families' do, maps no 2 MB
  // chunk), from the arena before that, for a large entry, or if no chunk can be mapped.
  char* NodeMemory(size_t bytes) {
    constexpr size_t kLinkAlign = alignof(std::atomic<Node*>);
    constexpr size_t kArenaNodeBytes = size_t{1} << 20;
    constexpr size_t kMaxChunkNodeBytes = HugePageChunks::kChunkBytes / 8;
    if (huge_pages_ && bytes <= kMaxChunkNodeBytes) {
      std::lock_guard<std::mutex> lock(allocator_lock_);
      if (arena_node_bytes_ >= kArenaNodeBytes) {
        if (char* at = chunks_.Allocate(bytes, kLinkAlign)) return at;
      } else {
        arena_node_bytes_ += bytes;
      }
    }
    char* raw = nullptr;
    MemTableRep::Allocate(bytes + kLinkAlign - 1, &raw);
    return Align(raw, kLinkAlign);
  }

  // A node of `height` links with room for an entry of `len` bytes (*buf).
  Node* NewNode(int height, size_t len, char** buf) {
    const size_t links = sizeof(std::atomic<Node*>) * static_cast<size_t>(height);
    char* at = NodeMemory(links + sizeof(Node) + len) + links;
    auto* node = new (at) Node();
    node->height = height;
    for (int i = 0; i < height; ++i) new (node->Link(i)) std::atomic<Node*>(nullptr);
    if (buf != nullptr) *buf = at + sizeof(Node);
    return node;
  }

  // 1 + the number of times a 1/kBranching chance comes up in a row.
  static int RandomHeight() {
    thread_local uint64_t random = 0x9e3779b97f4a7c15ull;
    int height = 1;
    while (height < kMaxHeight) {
      random ^= random << 13;
      random ^= random >> 7;
      random ^= random << 17;
      if (random % kBranching != 0) break;
      ++height;
    }
    return height;
  }

  // The writer: the path of this thread's read of x's user key in this list (spent: a second
  // insert of the key searches), or nullptr. A path older than kReadPathInserts inserts is
  // dropped: a level whose nodes are no longer adjacent is walked forward from its old prev
  // (Insert), and the walk is bounded by what was inserted since.
  Splice* TakeReadPath(const Node* x) {
    constexpr uint64_t kReadPathInserts = 256;
    const uint64_t inserts = inserts_.load(std::memory_order_relaxed);
    inserts_.store(inserts + 1, std::memory_order_relaxed);
    const uint64_t hash = UserKeyHash(EntryKey(x->Entry()));
    ReadPath& slot = tls_read_paths[hash % kReadPaths];
    if (slot.list != id_ || slot.key_hash != hash || inserts - slot.inserts > kReadPathInserts) {
      return nullptr;
    }
    slot.list = 0;
    ++tls_inserts_from_read_path;
    return &slot.path;
  }

  // The node before which `key` goes at `level`, from `before` on (which is before it): sets
  // *prev and *next. *before_same / *after_same: on entry, leading bytes of key known equal to
  // `before`'s and to those of a node after it at or past where the walk stops (0 when unknown:
  // the head, no such node); on return, the same for *prev and *next (prefix skipping, Compare).
  // Without kPrefixSkip, the counts are neither read nor set.
  template <bool kPrefixSkip>
  void FindAtLevel(const rocksdb::Slice& key, Node* before, int level, Node** prev, Node** next,
                   size_t* before_same, size_t* after_same) const {
    size_t lo = kPrefixSkip ? *before_same : 0;
    const size_t hi = kPrefixSkip ? *after_same : 0;
    size_t same = 0;
    Node* n = before->Next(level);
    PrefetchBelow(before, level);
    while (n != nullptr) {
      if (Compare(n->Entry(), key, kPrefixSkip ? std::min(lo, hi) : 0, &same) >= 0) break;
      before = n;
      if constexpr (kPrefixSkip) lo = same;
      n = n->Next(level);
      PrefetchBelow(before, level);
    }
    *prev = before;
    *next = n;
    if constexpr (kPrefixSkip) {
      *before_same = lo;
      *after_same = n == nullptr ? 0 : same;
    }
  }
  void FindAtLevel(const rocksdb::Slice& key, Node* before, int level, Node** prev, Node** next,
                   size_t* before_same, size_t* after_same) const {
    if (prefix_skip_) {
      FindAtLevel<true>(key, before, level, prev, next, before_same, after_same);
    } else {
      FindAtLevel<false>(key, before, level, prev, next, before_same, after_same);
    }
  }

  // The writer (holding writer_). Makes `splice` the path of `x` at every level up to the list's
  // height, reusing the levels where it still brackets x, then links x in from the bottom up.
  bool Insert(Node* x, Splice* splice) {
    Node* const head = head_.load(std::memory_order_acquire);
    const rocksdb::Slice key = EntryKey(x->Entry());
    int list_height = max_height_.load(std::memory_order_relaxed);
    if (x->height > list_height) {
      // Readers that see the new height before the links at it find nullptr there and go down.
      list_height = x->height;
      max_height_.store(list_height, std::memory_order_relaxed);
    }
    // The lowest level whose pair still brackets x (still adjacent, prev < x < next); the
    // levels below it are searched again from there. A level's prev is never after the prev of
    // the level below it, so the levels above stay on x's left; a level's next is never before
    // the next of the level below it, so once a next is after x, every next above it is too.
    // Hence two passes: up the nexts to the first one after x, then up from there to the first
    // adjacent pair whose prev is before x. A run of ascending inserts (a write group's sorted
    // metas) always has its prev before x: one comparison a level climbed instead of two.
    int valid = 0;
    if (splice->height < list_height) {
      valid = list_height;
      splice->height = list_height;
    } else {
      while (valid < list_height && splice->next[valid] != nullptr &&
             Compare(splice->next[valid]->Entry(), key) <= 0) {
        ++valid;
      }
      while (valid < list_height) {
        Node* p = splice->prev[valid];
        if (p->Next(valid) == splice->next[valid] && (p == head || Compare(p->Entry(), key) < 0)) {
          break;
        }
        ++valid;
      }
    }
    if (valid == list_height) {
      splice->prev[list_height] = head;
      splice->next[list_height] = nullptr;
    }
    // The pair at `valid` brackets x, but how many leading bytes they share with it is not
    // kept: the descent starts from 0 and learns them.
    size_t prev_same = 0;
    size_t next_same = 0;
    for (int level = valid - 1; level >= 0; --level) {
      FindAtLevel(key, splice->prev[level + 1], level, &splice->prev[level], &splice->next[level],
                  &prev_same, &next_same);
    }
    // An equal entry is next to x at level 0 (it cannot be before: prev < x).
    if (splice->next[0] != nullptr && Compare(splice->next[0]->Entry(), key) == 0) return false;
    for (int level = 0; level < x->height; ++level) {
      if (level >= valid && splice->prev[level]->Next(level) != splice->next[level]) {
        // Above the levels searched, a pair whose nodes are no longer adjacent: step forward.
        size_t unknown_before = 0;
        size_t unknown_after = 0;
        FindAtLevel(key, splice->prev[level], level, &splice->prev[level], &splice->next[level],
                    &unknown_before, &unknown_after);
      }
      x->Link(level)->store(splice->next[level], std::memory_order_relaxed);
      splice->prev[level]->SetNext(level, x);
      splice->prev[level] = x;
    }
    return true;
  }

  const KeyComparator& compare_;
  const bool bytewise_;
  const bool prefix_skip_;  // searches compare from the bytes their bounds share (Compare)
  const bool huge_pages_;
  // Taken by NewNode (RocksDB allocates an entry's node before inserting it, outside writer_).
  std::mutex allocator_lock_;
  size_t arena_node_bytes_ = 0;       // guarded by allocator_lock_
  HugePageChunks chunks_;             // guarded by allocator_lock_ (but MappedBytes)
  std::atomic<Node*> head_{nullptr};  // a node of kMaxHeight links before every entry
  std::atomic<int> max_height_{1};
  // Held by the writer: RocksDB already runs one memtable insert at a time, but on whichever
  // thread leads its write group, and that hand-over is invisible to TSan. Uncontended, it costs
  // two atomic instructions an insert; it also keeps a misconfigured DB from corrupting the list.
  std::mutex writer_;
  Splice splice_;  // the path of the last insert without a hint
  // ReadPath: which list a path belongs to (never reused), and the inserts so far (the writer
  // counts; readers note it with their paths).
  const uint64_t id_ = next_id_.fetch_add(1, std::memory_order_relaxed) + 1;
  std::atomic<uint64_t> inserts_{0};
  static inline std::atomic<uint64_t> next_id_{0};
};

void SkipListIterator::Prev() { node_ = list_->FindLessThan(EntryKey(node_->Entry())); }
void SkipListIterator::Seek(const rocksdb::Slice& internal_key, const char* /*memtable_key*/) {
  node_ = list_->FindGreaterOrEqual(internal_key);
}
void SkipListIterator::SeekForPrev(const rocksdb::Slice& internal_key,
                                   const char* /*memtable_key*/) {
  // The last entry at or before the key.
  Seek(internal_key, nullptr);
  if (node_ == nullptr) {
    SeekToLast();
  } else if (list_->Compare(node_->Entry(), internal_key) > 0) {
    Prev();
  }
}
void SkipListIterator::SeekToFirst() { node_ = list_->First(); }
void SkipListIterator::SeekToLast() { node_ = list_->Last(); }

class SkipListFactory final : public rocksdb::MemTableRepFactory {
 public:
  SkipListFactory(bool bytewise, bool huge_pages, bool prefix_skip)
      : bytewise_(bytewise), huge_pages_(huge_pages), prefix_skip_(prefix_skip) {}
  using rocksdb::MemTableRepFactory::CreateMemTableRep;
  rocksdb::MemTableRep* CreateMemTableRep(const rocksdb::MemTableRep::KeyComparator& compare,
                                          rocksdb::Allocator* allocator,
                                          const rocksdb::SliceTransform* /*prefix*/,
                                          rocksdb::Logger* /*logger*/) override {
    return new SkipListMemTable(compare, allocator, bytewise_, huge_pages_, prefix_skip_);
  }
  const char* Name() const override { return "RockcacheSkipListFactory"; }
  bool IsInsertConcurrentlySupported() const override { return false; }
  bool CanHandleDuplicatedKey() const override { return true; }

 private:
  const bool bytewise_;
  const bool huge_pages_;
  const bool prefix_skip_;
};

}  // namespace

std::shared_ptr<rocksdb::MemTableRepFactory> NewSkipListMemTableFactory(bool bytewise_keys,
                                                                        bool huge_pages,
                                                                        bool prefix_skip) {
  return std::make_shared<SkipListFactory>(bytewise_keys, huge_pages, prefix_skip);
}

void SetMemTableComparisonCheck(bool on) {
  g_check_comparisons.store(on, std::memory_order_relaxed);
}

uint64_t MemTableComparisonsOnThisThread() { return tls_comparisons; }
uint64_t MemTableInsertsFromReadPathOnThisThread() { return tls_inserts_from_read_path; }

}  // namespace rockcache::storage
