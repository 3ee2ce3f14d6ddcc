// Splits a line into arguments the way Redis's sdssplitargs does, for config files (redis.conf
// syntax) and inline protocol commands: whitespace separates arguments; "double quotes" take
// \n \r \t \b \a \\ \" and \xHH escapes; 'single quotes' take only \'. A closing quote must be
// followed by whitespace or the end of the line. Pure function, any thread.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rockcache {

// nullopt on unbalanced quotes (Redis: "Unbalanced quotes in request").
std::optional<std::vector<std::string>> SplitArgs(std::string_view line);

}  // namespace rockcache
