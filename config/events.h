// notify-keyspace-events values: Redis's class letters to the canonical string the config stores,
// and the string CONFIG GET prints (keyspaceEventsStringToFlags / keyspaceEventsFlagsToString in
// Redis's notify.c). Pure functions, any thread.
#pragma once

#include <string>
#include <string_view>

namespace rockcache::config {

// The canonical stored form of `text` ("KEA" -> "AKE", "Elg$" -> "g$lE"): "A" when every class
// 'A' stands for is on, else the classes in Redis's order, then K, E, m. One difference from
// Redis: `n` is kept after "A" ("An"), since the server parses its flags from this value.
// False on an unknown letter.
bool CanonicalEvents(std::string_view text, std::string* out);

// What Redis 7.0 prints for a canonical value: the same, except that `n` is not shown after "A"
// ("AnKE" -> "AKE"; Redis keeps the flag on but its flags-to-string skips it).
std::string DisplayEvents(std::string_view canonical);

}  // namespace rockcache::config
