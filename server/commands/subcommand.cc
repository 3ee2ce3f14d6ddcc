#include "server/commands/subcommand.h"

#include <cctype>

#include "server/commands/args.h"
#include "server/protocol/reply.h"

namespace rockcache::server {

void AppendSubcommandError(std::string* out, const Args& argv,
                           std::initializer_list<const char*> known) {
  std::string command = argv[0], sub = argv[1];
  for (char& c : command) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const char* name : known) {
    if (Is(sub, name)) {
      for (char& c : sub) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      std::string text = "ERR wrong number of arguments for '";
      text.append(command).append("|").append(sub).append("' command");
      return AppendError(out, text);
    }
  }
  for (char& c : command) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  std::string text = "ERR unknown subcommand '";
  text.append(sub, 0, 128).append("'. Try ").append(command).append(" HELP.");
  AppendError(out, text);
}

void AppendHelp(std::string* out, std::initializer_list<const char*> lines) {
  AppendArrayHeader(out, static_cast<int64_t>(lines.size()));
  for (const char* line : lines) AppendSimple(out, line);
}

}  // namespace rockcache::server
