// bigbench: the closed-loop load client of scripts/bench-bigdata.sh ("data bigger than the
// cache"). Like redis-benchmark, but the keys it reads can be skewed (Zipf) and every reply is
// checked. Keys are named as redis-benchmark -r names them (key:%012d), so both tools hit the
// same keys of a loaded server.
//
// Modes: `load` SETs keys 0..N-1 once each (pipeline 64 unless --pipeline is given) and prints
// keys/s; `get` sends only GETs; `mix` sends 90% GET and 10% SET. A value is --value-size bytes
// of printable pseudo-random characters fixed by the key's index (the same bytes on every run;
// barely compressible, unlike redis-benchmark's "xxx...", so RocksDB's LZ4 cannot shrink the
// data under test).
//
// Threads: --threads threads split the --clients connections between them. Each thread loops:
// for every one of its connections, append P commands and flush them; then read the P replies of
// each connection. A request's latency runs from its batch's flush to the read of its reply (as
// redis-benchmark measures it). Latencies go into a fixed log-linear histogram per thread (no
// allocation per request), merged at the end.
//
// Output: one machine-readable line
//   rps=<float> p50_ms=<float> p99_ms=<float> errors=<n> requests=<n>
// then a human line. An error reply (or a reply of the wrong type) counts as an error and the
// first one is printed; a broken connection counts its requests in flight as errors and the
// thread goes on with its other connections. Exit status 0 unless the flags are bad or no
// connection could be made.
#include <hiredis/hiredis.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "tests/bench/bigdata/bench_util.h"

namespace {

using bigdata::Rng;

// ---- Flags ----

struct Flags {
  std::string host = "127.0.0.1";
  int port = 6379;
  std::string mode = "get";      // load | get | mix
  std::string dist = "uniform";  // uniform | zipf
  uint64_t keys = 1000000;
  int value_size = 400;
  // 1.09 gives the hottest 1% of 1,000,000 keys 80.6% of the requests (77% of 200,000 keys,
  // 85% of 5,000,000); the classic 0.99 gives them 66%.
  double zipf_s = 1.09;
  int clients = 50;
  int pipeline = 0;  // 0: 64 for load, 1 otherwise
  int threads = 2;
  double seconds = 10;    // 0 = no time limit
  uint64_t requests = 0;  // 0 = no request limit
  uint64_t seed = 1;
};

void Usage() {
  std::fprintf(stderr,
               "usage: bigbench [--host H] [--port P] [--mode load|get|mix] [--keys N]\n"
               "                [--value-size B] [--dist uniform|zipf] [--zipf-s S]\n"
               "                [--clients C] [--pipeline P] [--threads T] [--seconds S]\n"
               "                [--requests R] [--seed X]\n");
}

// Parses `--name value` pairs and checks them; false (after a message) when they are bad.
bool ParseFlags(int argc, char** argv, Flags* f) {
  using bigdata::ToU64;
  const std::vector<bigdata::FlagSetter> setters = {
      {"--host", [f](const char* v) { f->host = v; }},
      {"--port", [f](const char* v) { f->port = std::atoi(v); }},
      {"--mode", [f](const char* v) { f->mode = v; }},
      {"--dist", [f](const char* v) { f->dist = v; }},
      {"--keys", [f](const char* v) { f->keys = ToU64(v); }},
      {"--value-size", [f](const char* v) { f->value_size = std::atoi(v); }},
      {"--zipf-s", [f](const char* v) { f->zipf_s = std::atof(v); }},
      {"--clients", [f](const char* v) { f->clients = std::atoi(v); }},
      {"--pipeline", [f](const char* v) { f->pipeline = std::atoi(v); }},
      {"--threads", [f](const char* v) { f->threads = std::atoi(v); }},
      {"--seconds", [f](const char* v) { f->seconds = std::atof(v); }},
      {"--requests", [f](const char* v) { f->requests = ToU64(v); }},
      {"--seed", [f](const char* v) { f->seed = ToU64(v); }},
  };
  if (!bigdata::ParseFlagPairs(argc, argv, "bigbench", setters)) return false;
  if (f->mode != "load" && f->mode != "get" && f->mode != "mix") {
    std::fprintf(stderr, "bigbench: --mode must be load, get or mix\n");
    return false;
  }
  if (f->dist != "uniform" && f->dist != "zipf") {
    std::fprintf(stderr, "bigbench: --dist must be uniform or zipf\n");
    return false;
  }
  if (f->pipeline == 0) f->pipeline = f->mode == "load" ? 64 : 1;
  if (f->keys == 0 || f->keys >= bigdata::kMaxKeys || f->clients < 1 || f->pipeline < 1 ||
      f->threads < 1 || f->value_size < 0 || f->zipf_s <= 0) {
    std::fprintf(stderr, "bigbench: a flag is out of range\n");
    return false;
  }
  f->threads = std::min(f->threads, f->clients);
  return true;
}

// ---- Keys ----

// Picks key indexes in [0, keys): uniform, or Zipf-like (rank r, 0-based, drawn with weight
// 1/(r+1)^s from a cumulative table, N doubles) with the rank scrambled by a multiplicative hash,
// rank * A mod N with A coprime to N (a bijection), so the hot keys are spread over the key space
// and over RocksDB's files rather than being key:0..k. Read-only after construction; any thread.
class KeyChooser {
 public:
  KeyChooser(uint64_t keys, bool zipf, double s) : keys_(keys), zipf_(zipf) {
    if (!zipf_) return;
    cdf_.resize(keys_);
    double sum = 0;
    for (uint64_t r = 0; r < keys_; ++r) {
      sum += std::pow(static_cast<double>(r + 1), -s);
      cdf_[r] = sum;
    }
    for (double& c : cdf_) c /= sum;
    multiplier_ = 0x9e3779b97f4a7c15ull % keys_;  // the golden ratio's bits, then made coprime
    if (multiplier_ == 0) multiplier_ = 1;
    while (std::gcd(multiplier_, keys_) != 1) ++multiplier_;
  }

  uint64_t Pick(Rng& rng) const {
    if (!zipf_) return rng.Next() % keys_;
    const double u = rng.NextDouble();
    const uint64_t rank = std::upper_bound(cdf_.begin(), cdf_.end(), u) - cdf_.begin();
    return Scramble(std::min(rank, keys_ - 1));
  }

  // The share of requests the hottest `fraction` of the keys get (exact, from the table).
  double HottestShare(double fraction) const {
    const uint64_t n = std::max<uint64_t>(1, static_cast<uint64_t>(keys_ * fraction));
    return zipf_ ? cdf_[n - 1] : static_cast<double>(n) / keys_;
  }

 private:
  uint64_t Scramble(uint64_t rank) const {
    return static_cast<uint64_t>(static_cast<unsigned __int128>(rank) * multiplier_ % keys_);
  }

  uint64_t keys_;
  bool zipf_;
  std::vector<double> cdf_;
  uint64_t multiplier_ = 1;
};

// ---- Latency histogram ----

// Log-linear buckets over nanoseconds: values below 64 ns exactly, then 32 buckets per power of
// two (~3% wide), up to 2^36 ns (~69 s; anything longer lands in the last bucket). Fixed size:
// Add never allocates. One per thread; Merge at the end.
class LatencyHistogram {
 public:
  static constexpr int kSubBits = 5;
  static constexpr uint64_t kSub = 1u << kSubBits;
  static constexpr int kMaxBits = 36;
  static constexpr size_t kBuckets = (kMaxBits - kSubBits + 1) * kSub;

  void Add(uint64_t ns) {
    ++counts_[Index(std::min<uint64_t>(ns, (uint64_t{1} << kMaxBits) - 1))];
    ++total_;
  }
  void Merge(const LatencyHistogram& other) {
    for (size_t i = 0; i < kBuckets; ++i) counts_[i] += other.counts_[i];
    total_ += other.total_;
  }
  uint64_t total() const { return total_; }

  // The q-quantile (0 < q <= 1) in milliseconds: the middle of the bucket that holds it.
  double QuantileMs(double q) const {
    if (total_ == 0) return 0;
    const uint64_t rank = std::max<uint64_t>(1, static_cast<uint64_t>(std::ceil(q * total_)));
    uint64_t seen = 0;
    for (size_t i = 0; i < kBuckets; ++i) {
      seen += counts_[i];
      if (seen >= rank) return (Lower(i) + Lower(i + 1)) / 2.0 / 1e6;
    }
    return Lower(kBuckets) / 1e6;
  }

 private:
  static size_t Index(uint64_t v) {
    if (v < 2 * kSub) return v;
    const int shift = 63 - __builtin_clzll(v) - kSubBits;
    return (shift + 1) * kSub + (v >> shift) - kSub;
  }
  static double Lower(size_t i) {  // the smallest value of bucket i
    if (i < 2 * kSub) return static_cast<double>(i);
    const int shift = static_cast<int>(i / kSub) - 1;
    return std::ldexp(static_cast<double>(i % kSub + kSub), shift);
  }

  uint64_t counts_[kBuckets] = {};
  uint64_t total_ = 0;
};

// ---- Commands ----

enum class Kind : uint8_t { kGet, kSet };

// Formats GET and SET in RESP into buffers made once: a command is its template with the key's
// 12 digits (and for SET the value's bytes) written in place. One per thread.
class CommandFormatter {
 public:
  explicit CommandFormatter(int value_size) : value_size_(value_size) {
    get_ = "*2\r\n$3\r\nGET\r\n$16\r\nkey:000000000000\r\n";
    get_digits_ = get_.size() - 2 - 12;
    set_ = "*3\r\n$3\r\nSET\r\n$16\r\nkey:000000000000\r\n$" + std::to_string(value_size) + "\r\n" +
           std::string(value_size, 'x') + "\r\n";
    set_digits_ = std::strlen("*3\r\n$3\r\nSET\r\n$16\r\nkey:");
    set_value_ = set_.size() - 2 - value_size;
  }

  const std::string& Get(uint64_t key) {
    bigdata::WriteKeyDigits(key, &get_[get_digits_]);
    return get_;
  }
  const std::string& Set(uint64_t key) {
    bigdata::WriteKeyDigits(key, &set_[set_digits_]);
    WriteValue(key, &set_[set_value_]);
    return set_;
  }

 private:
  // 64 printable characters, 6 bits of a key-seeded SplitMix64 stream each.
  void WriteValue(uint64_t key, char* out) const {
    static const char kAlphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    Rng rng(key * 0x2545f4914f6cdd1dull + 1);
    uint64_t bits = 0;
    int left = 0;
    for (int i = 0; i < value_size_; ++i) {
      if (left == 0) {
        bits = rng.Next();
        left = 10;
      }
      out[i] = kAlphabet[bits & 63];
      bits >>= 6;
      --left;
    }
  }

  int value_size_;
  std::string get_, set_;
  size_t get_digits_ = 0, set_digits_ = 0, set_value_ = 0;
};

// ---- The run ----

// What every thread reads, and the few counters they share.
struct Shared {
  const Flags* flags;
  const KeyChooser* chooser;
  std::chrono::steady_clock::time_point deadline;
  bool has_deadline = false;
  // Requests (load: keys) not yet handed out; each connection's batch claims up to P.
  std::atomic<uint64_t> budget{0};
  std::atomic<uint64_t> next_load_key{0};
  std::atomic<bool> error_printed{false};

  // Claims up to `want` requests of the budget; 0 when it is spent.
  uint64_t Claim(uint64_t want) {
    uint64_t have = budget.load(std::memory_order_relaxed);
    while (have > 0) {
      const uint64_t take = std::min(have, want);
      if (budget.compare_exchange_weak(have, have - take, std::memory_order_relaxed)) return take;
    }
    return 0;
  }
  void PrintErrorOnce(const std::string& what) {
    if (!error_printed.exchange(true)) std::fprintf(stderr, "bigbench: error: %s\n", what.c_str());
  }
};

struct ThreadResult {
  LatencyHistogram histogram;
  uint64_t errors = 0;
  uint64_t nils = 0;  // GETs of absent keys
};

using ContextPtr = std::unique_ptr<redisContext, decltype(&redisFree)>;

// One connection with the batch it has in flight.
struct Connection {
  ContextPtr ctx{nullptr, &redisFree};
  std::vector<Kind> inflight;  // kinds of the batch sent, in order
  std::chrono::steady_clock::time_point sent;
};

ContextPtr Connect(const Flags& f) {
  const timeval timeout{5, 0};
  ContextPtr ctx(redisConnectWithTimeout(f.host.c_str(), f.port, timeout), &redisFree);
  if (ctx == nullptr || ctx->err != 0) {
    std::fprintf(stderr, "bigbench: cannot connect to %s:%d: %s\n", f.host.c_str(), f.port,
                 ctx ? ctx->errstr : "out of memory");
    return ContextPtr(nullptr, &redisFree);
  }
  const int one = 1;
  setsockopt(ctx->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  redisSetTimeout(ctx.get(), timeval{30, 0});  // a server stalled this long is a failure
  return ctx;
}

// Checks one reply; false (and the first one printed) for an error or an unexpected type.
bool CheckReply(const redisReply* r, Kind kind, Shared* shared, uint64_t* nils) {
  if (r->type == REDIS_REPLY_ERROR) {
    shared->PrintErrorOnce(std::string("error reply: ") + std::string(r->str, r->len));
    return false;
  }
  if (kind == Kind::kGet) {
    if (r->type == REDIS_REPLY_NIL) {
      ++*nils;
      return true;
    }
    if (r->type == REDIS_REPLY_STRING) return true;
    shared->PrintErrorOnce("GET answered with reply type " + std::to_string(r->type));
    return false;
  }
  if (r->type == REDIS_REPLY_STATUS && r->len == 2 && std::memcmp(r->str, "OK", 2) == 0) {
    return true;
  }
  shared->PrintErrorOnce("SET answered with reply type " + std::to_string(r->type));
  return false;
}

// Appends and flushes one batch on `conn`; false when there was nothing left to send (or the
// connection broke, counted in `result`).
bool SendBatch(Connection* conn, Shared* shared, CommandFormatter* fmt, Rng* rng,
               ThreadResult* result) {
  const Flags& f = *shared->flags;
  const bool load = f.mode == "load", mix = f.mode == "mix";
  uint64_t n = 0, first_key = 0;
  if (load) {
    first_key = shared->next_load_key.fetch_add(f.pipeline, std::memory_order_relaxed);
    if (first_key < f.keys) n = std::min<uint64_t>(f.pipeline, f.keys - first_key);
  } else {
    n = shared->Claim(f.pipeline);
  }
  if (n == 0) return false;
  conn->inflight.clear();
  for (uint64_t i = 0; i < n; ++i) {
    Kind kind = Kind::kGet;
    uint64_t key;
    if (load) {
      kind = Kind::kSet;
      key = first_key + i;
    } else {
      if (mix && rng->Next() % 10 == 0) kind = Kind::kSet;
      key = shared->chooser->Pick(*rng);
    }
    const std::string& cmd = kind == Kind::kGet ? fmt->Get(key) : fmt->Set(key);
    redisAppendFormattedCommand(conn->ctx.get(), cmd.data(), cmd.size());
    conn->inflight.push_back(kind);
  }
  conn->sent = std::chrono::steady_clock::now();
  int done = 0;
  while (!done) {
    if (redisBufferWrite(conn->ctx.get(), &done) != REDIS_OK) {
      shared->PrintErrorOnce(std::string("write failed: ") + conn->ctx->errstr);
      result->errors += n;
      conn->inflight.clear();
      conn->ctx.reset();
      return false;
    }
  }
  return true;
}

// Reads the replies of the batch in flight on `conn`.
void ReadBatch(Connection* conn, Shared* shared, ThreadResult* result) {
  for (size_t i = 0; i < conn->inflight.size(); ++i) {
    void* reply = nullptr;
    if (redisGetReply(conn->ctx.get(), &reply) != REDIS_OK || reply == nullptr) {
      shared->PrintErrorOnce(std::string("read failed: ") + conn->ctx->errstr);
      result->errors += conn->inflight.size() - i;
      conn->ctx.reset();
      break;
    }
    const auto now = std::chrono::steady_clock::now();
    result->histogram.Add(
        std::chrono::duration_cast<std::chrono::nanoseconds>(now - conn->sent).count());
    auto* r = static_cast<redisReply*>(reply);
    if (!CheckReply(r, conn->inflight[i], shared, &result->nils)) ++result->errors;
    freeReplyObject(r);
  }
  conn->inflight.clear();
}

void RunThread(std::vector<Connection>* conns, Shared* shared, uint64_t seed,
               ThreadResult* result) {
  CommandFormatter fmt(shared->flags->value_size);
  Rng rng(seed);
  for (Connection& c : *conns) c.inflight.reserve(shared->flags->pipeline);
  bool more = true;
  while (more) {
    if (shared->has_deadline && std::chrono::steady_clock::now() >= shared->deadline) break;
    more = false;
    for (Connection& c : *conns) {
      if (c.ctx != nullptr && SendBatch(&c, shared, &fmt, &rng, result)) more = true;
    }
    for (Connection& c : *conns) {
      if (!c.inflight.empty()) ReadBatch(&c, shared, result);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  Flags f;
  if (argc > 1 && (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0)) {
    Usage();
    return 0;
  }
  if (!ParseFlags(argc, argv, &f)) {
    Usage();
    return 2;
  }
  const bool load = f.mode == "load";
  const KeyChooser chooser(f.keys, !load && f.dist == "zipf", f.zipf_s);
  if (!load) {
    char exponent[32] = "";
    if (f.dist == "zipf") std::snprintf(exponent, sizeof(exponent), " (s=%g)", f.zipf_s);
    std::printf("# %s%s over %llu keys: the hottest 1%% of the keys get %.1f%% of the requests\n",
                f.dist.c_str(), exponent, static_cast<unsigned long long>(f.keys),
                100 * chooser.HottestShare(0.01));
  }

  // Connections, dealt round-robin to the threads.
  std::vector<std::vector<Connection>> per_thread(f.threads);
  for (int i = 0; i < f.clients; ++i) {
    Connection c;
    c.ctx = Connect(f);
    if (c.ctx == nullptr) return 1;
    per_thread[i % f.threads].push_back(std::move(c));
  }

  Shared shared;
  shared.flags = &f;
  shared.chooser = &chooser;
  shared.budget = f.requests > 0 ? f.requests : UINT64_MAX;
  const auto start = std::chrono::steady_clock::now();
  if (!load && f.seconds > 0) {
    shared.has_deadline = true;
    shared.deadline = start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                  std::chrono::duration<double>(f.seconds));
  }
  std::vector<ThreadResult> results(f.threads);
  std::vector<std::thread> threads;
  for (int t = 0; t < f.threads; ++t) {
    threads.emplace_back(RunThread, &per_thread[t], &shared, f.seed * 1000003 + t, &results[t]);
  }
  for (auto& t : threads) t.join();
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  ThreadResult total;
  for (const auto& r : results) {
    total.histogram.Merge(r.histogram);
    total.errors += r.errors;
    total.nils += r.nils;
  }
  const uint64_t requests = total.histogram.total() + total.errors;
  const double rps = requests / elapsed;
  std::printf("rps=%.1f p50_ms=%.3f p99_ms=%.3f errors=%llu requests=%llu\n", rps,
              total.histogram.QuantileMs(0.50), total.histogram.QuantileMs(0.99),
              static_cast<unsigned long long>(total.errors),
              static_cast<unsigned long long>(requests));
  if (load) {
    std::printf("# load: %llu keys of %d bytes in %.2f s: %.0f keys/s, pipeline %d, %d clients\n",
                static_cast<unsigned long long>(requests), f.value_size, elapsed, rps, f.pipeline,
                f.clients);
  } else {
    std::printf(
        "# %s %s: %.0f requests/s over %.2f s, p50 %.3f ms, p99 %.3f ms, p99.9 %.3f ms, "
        "%llu errors, %llu GETs of absent keys; %d clients, pipeline %d, %d threads\n",
        f.mode.c_str(), f.dist.c_str(), rps, elapsed, total.histogram.QuantileMs(0.50),
        total.histogram.QuantileMs(0.99), total.histogram.QuantileMs(0.999),
        static_cast<unsigned long long>(total.errors), static_cast<unsigned long long>(total.nils),
        f.clients, f.pipeline, f.threads);
  }
  return 0;
}
