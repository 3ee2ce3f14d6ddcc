// The one table of rockcache options, and the Config object that holds their current values.
//
// Every tunable of every module is a row of kOptionTable (config.cc): name, type, default,
// bounds, whether CONFIG SET may change it while running, and one sentence on its trade-off.
// Redis 7.0's parameters are rows too (redis_options.cc), each of an OptionKind below, so every
// redis.conf name is accepted. rockcache.conf at the repository root documents all the rows
// (scripts/generate-conf.py writes it from both files).
//
// Sources, later wins: built-in defaults < config file (redis.conf syntax: `name value...`,
// `#` comments, quoted strings, sizes like `512mb`) < command line (`--name value...`).
//
// Thread-safety: all methods are thread-safe (one mutex; they are not on any hot path — modules
// copy what they need at start-up or through an OnChange callback).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config/mutex.h"
#include "config/status.h"

namespace rockcache::config {

enum class OptionType {
  kBool,          // yes | no
  kInt,           // integer within [min, max]
  kMemory,        // byte count; accepts 100, 1k (1000), 1kb (1024), 5mb, 2gb
  kString,        // any string (a list of words for `bind`)
  kEnum,          // one of `choices` ("a|b|c")
  kEvents,        // notify-keyspace-events flags ("KEA"), shown in Redis's canonical order ("AKE")
  kSave,          // save points: "" or "<seconds> <changes>" pairs (Redis's validation)
  kPercentiles,   // space-separated numbers in [0, 100] (latency-tracking-info-percentiles)
  kBufferLimits,  // client-output-buffer-limit groups (config/buffer_limits.h), merged per class
};

// What a row is. rockcache's own options are kNative; the other kinds give every parameter of
// Redis 7.0's redis.conf a meaning here, so tools that probe or tune a Redis server keep working.
enum class OptionKind {
  kNative,    // a rockcache option
  kMapped,    // a Redis name for the rockcache option `target`: one setting, two names (Get and
              // Set of either see the same value; MapToTarget translates where the words differ)
  kReported,  // a fact about rockcache in Redis's terms (appendonly yes): only that value is
              // accepted; any other is an error saying why
  kNoEffect,  // a Redis parameter for a mechanism rockcache does not have: validated as Redis
              // does and stored, so CONFIG GET shows what was set, but nothing reads it
};

struct OptionSpec {
  const char* name;
  OptionType type;
  const char* default_value;
  int64_t min;  // kInt / kMemory bounds (inclusive)
  int64_t max;
  const char* choices;  // kEnum: "a|b|c"; otherwise nullptr
  bool runtime;         // CONFIG SET may change it while running
  const char* doc;      // one line: what it does and its trade-off
  OptionKind kind = OptionKind::kNative;
  const char* target = nullptr;  // kMapped: the name of the row that holds the value
};

// The table, in the order rockcache.conf documents it: rockcache's options (config.cc), then
// Redis 7.0's parameters (redis_options.cc).
const std::vector<OptionSpec>& OptionTable();
// nullptr when unknown. Names are case-insensitive.
const OptionSpec* FindOption(std::string_view name);
// The row that holds `spec`'s value: itself, or for kMapped its target.
const OptionSpec& StorageOption(const OptionSpec& spec);

// Parses "512mb"-style sizes as Redis does (k = 1000, kb = 1024, m, mb, g, gb). False on junk.
bool ParseMemory(std::string_view text, int64_t* bytes);

class Config {
 public:
  // Every option at its default.
  Config();

  // Reads `rockcache-server [configfile] [--name value...]`. A first argument not starting
  // with "--" is the config file. Errors name the file, line and option, or the flag.
  [[nodiscard]] Status LoadFromArgs(int argc, const char* const* argv);
  // Applies a config file. Error: "<path>:<line>: '<option>': <why>".
  [[nodiscard]] Status LoadFile(const std::string& path);
  // Applies one config-file line's text (used by LoadFile; "" and comments are fine).
  [[nodiscard]] Status ApplyLine(std::string_view line);

  // Validates and stores `value` (for a multi-word option like bind, words joined by spaces).
  // With `from_config_set`, options that are not runtime-settable are refused. Runs OnChange
  // callbacks after storing (outside the lock).
  [[nodiscard]] Status Set(std::string_view name, std::string_view value,
                           bool from_config_set = false);
  // CONFIG SET name value [name value ...]: validates every pair first (unknown name, immutable,
  // bad value, the same setting twice under any of its names) and changes nothing on error, as
  // Redis 7. The error names the argument: "Unknown option or number of arguments for CONFIG SET
  // - 'x'" or "CONFIG SET failed (possibly related to argument 'x') - <why>" (no "ERR ").
  [[nodiscard]] Status SetMany(const std::vector<std::pair<std::string, std::string>>& pairs);
  // CONFIG REWRITE: rewrites config_file() in place (through a temporary file and rename):
  // comments, blank lines and order kept; each option's first line gets its current value (in the
  // name the file used), later duplicates are dropped; options not in the file whose value
  // differs from the default are appended after a "# Generated by CONFIG REWRITE" line.
  // Errors: "The server is running without a config file"; "Rewriting config file: <why>".
  [[nodiscard]] Status Rewrite() const;

  // Canonical current value: kBool "yes"/"no", kInt/kMemory decimal, kString/kEnum as set.
  std::string Get(std::string_view name) const;
  int64_t GetInt(std::string_view name) const;  // kInt, kMemory
  bool GetBool(std::string_view name) const;
  std::string GetString(std::string_view name) const;
  // (name, value) pairs whose name matches the glob, in table order, values as CONFIG GET prints
  // them (notify-keyspace-events as Redis 7.0 renders it: "A" without the `n` Get keeps).
  std::vector<std::pair<std::string, std::string>> Match(std::string_view pattern) const;

  // Path of the config file loaded, "" when none.
  std::string config_file() const;

  // Called with (name, canonical value) after every successful Set. Register at start-up.
  void OnChange(std::function<void(const std::string&, const std::string&)> callback);

 private:
  Status Canonicalize(const OptionSpec& spec, std::string_view value, std::string* out) const;
  // Validates `value` for `spec` (any kind) and returns, in *store, what to store under
  // StorageOption(spec).
  Status Prepare(const OptionSpec& spec, std::string_view value, bool from_config_set,
                 std::string* store) const EXCLUDES(mu_);
  std::string GetLocked(const OptionSpec& spec) const REQUIRES(mu_);

  mutable Mutex mu_;
  std::map<std::string, std::string> values_ GUARDED_BY(mu_);
  std::string config_file_ GUARDED_BY(mu_);
  std::vector<std::function<void(const std::string&, const std::string&)>> callbacks_;
};

}  // namespace rockcache::config
