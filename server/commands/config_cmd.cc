// CONFIG GET / SET / RESETSTAT / REWRITE / HELP over the one option table (config/config.h):
// rockcache's options and Redis 7.0's parameters, each mapped, reported or stored without effect.
#include <algorithm>

#include "config/config.h"
#include "server/commands/args.h"
#include "server/commands/command.h"
#include "server/commands/subcommand.h"
#include "server/protocol/reply.h"
#include "server/server_admin.h"

namespace rockcache::server {
namespace {

// CONFIG GET pattern [pattern ...]: each matching name once, in table order of first match.
void ConfigGet(config::Config& config, const Args& argv, std::string* out) {
  std::vector<std::pair<std::string, std::string>> found;
  for (size_t i = 2; i < argv.size(); ++i) {
    for (auto& pair : config.Match(argv[i])) {
      bool seen = std::any_of(found.begin(), found.end(),
                              [&](const auto& f) { return f.first == pair.first; });
      if (!seen) found.push_back(std::move(pair));
    }
  }
  AppendMapHeader(out, static_cast<int64_t>(found.size()));
  for (const auto& [name, value] : found) {
    AppendBulk(out, name);
    AppendBulk(out, value);
  }
}

void Config(CommandContext& ctx, Args& argv, std::string* out) {
  const std::string& sub = argv[1];
  config::Config& config = ctx.admin().config();
  if (Is(sub, "GET") && argv.size() >= 3) return ConfigGet(config, argv, out);
  if (Is(sub, "SET") && argv.size() >= 4 && argv.size() % 2 == 0) {
    std::vector<std::pair<std::string, std::string>> pairs;
    for (size_t i = 2; i + 1 < argv.size(); i += 2) pairs.emplace_back(argv[i], argv[i + 1]);
    Status s = config.SetMany(pairs);
    if (!s.ok()) return AppendError(out, "ERR " + s.message());
    return out->append(kReplyOk), void();
  }
  if (Is(sub, "RESETSTAT") && argv.size() == 2) {
    ctx.admin().ResetStats();
    return out->append(kReplyOk), void();
  }
  if (Is(sub, "REWRITE") && argv.size() == 2) {
    Status s = config.Rewrite();
    if (!s.ok()) return AppendError(out, "ERR " + s.message());
    return out->append(kReplyOk), void();
  }
  if (Is(sub, "HELP") && argv.size() == 2) {
    return AppendHelp(
        out, {
                 "CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
                 "GET <pattern>",
                 "    Return parameters matching the glob-like <pattern> and their values.",
                 "SET <directive> <value>",
                 "    Set the configuration <directive> to <value>.",
                 "RESETSTAT",
                 "    Reset statistics reported by the INFO command.",
                 "REWRITE",
                 "    Rewrite the configuration file.",
                 "HELP",
                 "    Prints this help.",
             });
  }
  AppendSubcommandError(out, argv, {"GET", "SET", "RESETSTAT", "REWRITE", "HELP"});
}

}  // namespace

// clang-format off
const std::vector<CommandSpec> kConfigCommands = {
    {"config", -2, kConnection | kAdmin, 0, 0, 0, Config, nullptr,
     "get|set|resetstat|rewrite|help"},
};
// clang-format on

}  // namespace rockcache::server
