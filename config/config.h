// The one table of rockcache options, and the Config object that holds their current values.
//
// Every tunable of every module is a row of kOptionTable (config.cc): name, type, default,
// bounds, whether CONFIG SET may change it while running, and one sentence on its trade-off.
// rockcache.conf at the repository root documents the same rows for users.
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

#include "config/status.h"

namespace rockcache::config {

enum class OptionType {
  kBool,    // yes | no
  kInt,     // integer within [min, max]
  kMemory,  // byte count; accepts 100, 1k (1000), 1kb (1024), 5mb, 2gb
  kString,  // any string (a list of words for `bind`)
  kEnum,    // one of `choices` ("a|b|c")
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
};

// The table, in the order rockcache.conf documents it.
const std::vector<OptionSpec>& OptionTable();
// nullptr when unknown. Names are case-insensitive.
const OptionSpec* FindOption(std::string_view name);

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

  // Canonical current value: kBool "yes"/"no", kInt/kMemory decimal, kString/kEnum as set.
  std::string Get(std::string_view name) const;
  int64_t GetInt(std::string_view name) const;  // kInt, kMemory
  bool GetBool(std::string_view name) const;
  std::string GetString(std::string_view name) const;
  // (name, value) pairs whose name matches the glob, in table order (CONFIG GET).
  std::vector<std::pair<std::string, std::string>> Match(std::string_view pattern) const;

  // Path of the config file loaded, "" when none.
  std::string config_file() const;

  // Called with (name, canonical value) after every successful Set. Register at start-up.
  void OnChange(std::function<void(const std::string&, const std::string&)> callback);

 private:
  Status Canonicalize(const OptionSpec& spec, std::string_view value, std::string* out) const;

  mutable std::mutex mu_;
  std::map<std::string, std::string> values_;  // GUARDED_BY(mu_)
  std::string config_file_;                    // GUARDED_BY(mu_)
  std::vector<std::function<void(const std::string&, const std::string&)>> callbacks_;
};

}  // namespace rockcache::config
