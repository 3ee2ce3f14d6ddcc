#include <algorithm>
#include <cctype>
#include <unordered_map>

#include "server/command.h"
#include "server/reply.h"

namespace rockcache::server {
namespace {

struct Table {
  std::unordered_map<std::string, std::pair<const CommandSpec*, int>> by_name;
  std::vector<const CommandSpec*> all;

  Table() {
    for (const auto* group : {&kServerCommands, &kStringCommands, &kKeyspaceCommands,
                              &kHashCommands, &kListCommands, &kSetCommands, &kZSetCommands}) {
      for (const auto& spec : *group) {
        by_name.emplace(spec.name, std::make_pair(&spec, static_cast<int>(all.size())));
        all.push_back(&spec);
      }
    }
  }
};

const Table& GetTable() {
  static const Table table;
  return table;
}

}  // namespace

const CommandSpec* FindCommand(std::string_view name, int* id) {
  char lower[32];
  if (name.size() >= sizeof(lower)) return nullptr;
  for (size_t i = 0; i < name.size(); ++i) {
    lower[i] = static_cast<char>(std::tolower(static_cast<unsigned char>(name[i])));
  }
  const auto& table = GetTable();
  auto it = table.by_name.find(std::string(lower, name.size()));
  if (it == table.by_name.end()) return nullptr;
  if (id != nullptr) *id = it->second.second;
  return it->second.first;
}

const std::vector<const CommandSpec*>& AllCommands() { return GetTable().all; }

std::vector<std::string_view> CommandKeys(const CommandSpec& spec, const Args& argv) {
  std::vector<std::string_view> keys;
  if (spec.first_key <= 0) return keys;
  int last = spec.last_key < 0 ? static_cast<int>(argv.size()) + spec.last_key : spec.last_key;
  int step = spec.key_step > 0 ? spec.key_step : 1;
  for (int i = spec.first_key; i <= last && i < static_cast<int>(argv.size()); i += step) {
    keys.emplace_back(argv[static_cast<size_t>(i)]);
  }
  return keys;
}

void AppendUnknownCommand(std::string* out, const Args& argv) {
  // As Redis: each argument quoted, the argument list cut once it passes 128 bytes.
  std::string args;
  for (size_t i = 1; i < argv.size() && args.size() < 128; ++i) {
    size_t room = 128 - args.size();
    args += "'";
    args.append(argv[i], 0, room);
    args += "' ";
  }
  std::string text = "ERR unknown command '";
  text.append(argv[0], 0, 128);
  text += "', with args beginning with: ";
  text += args;
  AppendError(out, text);
}

void AppendArityError(std::string* out, std::string_view name) {
  std::string text = "ERR wrong number of arguments for '";
  for (char c : name)
    text.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  text += "' command";
  AppendError(out, text);
}

}  // namespace rockcache::server
