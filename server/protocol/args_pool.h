// server/protocol/args_pool — argument vectors of finished commands, kept by a network loop for
// the commands it parses next.
//
// A command handed to the worker pool takes its argument vector with it (PreparedCommand::argv),
// so the parser (resp_parser.h), which reuses the vector it is given back, would start every
// pipelined command from an empty one: a vector allocation, an allocation for every argument
// longer than the 15 bytes a std::string holds inline, and as many frees when the command is done
// (~1,000 instructions of a pipelined HSET's ~10k). The loop gives a finished command's vector
// back here (Keep) when its reply is in, and the next command handed to the pool leaves one of
// them behind in its place (Take), strings and their capacity included.
//
// How many: a vector comes back when its command's reply is in, and is taken again when the
// client's next command arrives, after it has read the reply. So a whole pass of completions
// (up to every connection's pipeline: 50 clients x 16 in redis-benchmark -P 16) is kept before
// the first of them is taken: with 256 kept, half of the commands of that run still allocated.
//
// Bounded: at most kMaxVectors vectors, each of at most kMaxArgs arguments and kMaxBytes of
// string capacity, so a loop keeps at most ~1.5 MB (kMaxVectors * (kMaxBytes + the vector's
// kMaxArgs string objects)) whatever its clients send; a bigger vector is freed as before.
//
// Threads: owned and used by one network loop thread.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace rockcache::server {

class ArgsPool {
 public:
  using Args = std::vector<std::string>;

  static constexpr size_t kMaxVectors = 1024;
  static constexpr size_t kMaxArgs = 16;
  static constexpr size_t kMaxBytes = 1024;

  // A kept vector (its strings still hold the old arguments; the parser overwrites them), or an
  // empty one.
  Args Take() {
    if (spare_.empty()) return Args();
    Args args = std::move(spare_.back());
    spare_.pop_back();
    return args;
  }

  // Keeps `args` for a later Take when it is within the bounds and the pool has room.
  void Keep(Args&& args) {
    if (spare_.size() >= kMaxVectors || args.empty() || args.capacity() > kMaxArgs) return;
    size_t bytes = 0;
    for (const std::string& arg : args) bytes += arg.capacity();
    if (bytes > kMaxBytes) return;
    spare_.push_back(std::move(args));
  }

  size_t size() const { return spare_.size(); }

 private:
  std::vector<Args> spare_;
};

}  // namespace rockcache::server
