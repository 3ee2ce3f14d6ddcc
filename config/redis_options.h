// Redis 7.0's configuration parameters as rows of the option table (config.h explains the kinds),
// and the translation of a mapped Redis name's value into its rockcache option's value.
// Pure functions over constant data: any thread.
#pragma once

#include <string>
#include <vector>

#include "config/config.h"
#include "config/status.h"

namespace rockcache::config {

// The Redis rows, appended to rockcache's own by OptionTable().
const std::vector<OptionSpec>& RedisOptionRows();

// For a kMapped row: turns its canonical `value` (validated by the row's own, Redis-side type)
// into the value of its target. InvalidArgument (the text after "CONFIG SET failed ... - ") when
// the Redis value has no rockcache equivalent, e.g. maxmemory-policy noeviction.
Status MapToTarget(const OptionSpec& spec, const std::string& value, std::string* target_value);

}  // namespace rockcache::config
