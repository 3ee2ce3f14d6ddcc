#include <algorithm>
#include <cctype>
#include <cstdint>
#include <string_view>

#include "server/commands/command.h"
#include "server/protocol/reply.h"

namespace rockcache::server {
namespace {

// Command names are ASCII; lookups fold A-Z on the fly, so FindCommand never copies the name.
inline unsigned char Fold(char c) {
  unsigned char u = static_cast<unsigned char>(c);
  return u >= 'A' && u <= 'Z' ? static_cast<unsigned char>(u | 0x20) : u;
}

uint32_t FoldedHash(std::string_view name) {
  uint32_t h = 2166136261u;  // FNV-1a
  for (char c : name) h = (h ^ Fold(c)) * 16777619u;
  return h;
}

// Open addressing over the command ids, at most 1/4 full: a lookup is one hash and usually one
// case-folded compare.
struct Table {
  std::vector<int> slots;  // command id, or -1 for empty; size is a power of two
  std::vector<std::string_view> names;
  std::vector<const CommandSpec*> all;

  Table() {
    for (const auto* group :
         // clang-format off: one row group per line, so adding a family is a one-line change
         {&kServerCommands,        &kConfigCommands,        &kCommandDocsCommands,
          &kObservabilityCommands, &kIntrospectionCommands, &kStringCommands,
          &kKeyspaceCommands,      &kHashCommands,          &kListCommands,
          &kSetCommands,           &kZSetCommands,          &kHyperLogLogCommands,
          &kGeoCommands,           &kSortCommands,          &kBitmapCommands,
          &kLcsCommands,           &kZSetAlgebraCommands,   &kMultiPopCommands,
          &kTransactionCommands,   &kPubSubCommands,        &kBlockingCommands,
          &kDatabaseCommands,      &kStreamCommands,        &kScriptingCommands,
          &kDumpCommands,          &kMigrateCommands,       &kStreamReadCommands,
          &kStreamGroupCommands,   &kPersistenceCommands,   &kReplicationCommands}) {
      // clang-format on
      for (const auto& spec : *group) {
        names.emplace_back(spec.name);
        all.push_back(&spec);
      }
    }
    size_t size = 16;
    while (size < all.size() * 4) size *= 2;
    slots.assign(size, -1);
    for (size_t id = 0; id < all.size(); ++id) {
      size_t i = FoldedHash(names[id]) & (size - 1);
      while (slots[i] >= 0) i = (i + 1) & (size - 1);
      slots[i] = static_cast<int>(id);
    }
  }
};

const Table& GetTable() {
  static const Table table;
  return table;
}

}  // namespace

const CommandSpec* FindCommand(std::string_view name, int* id) {
  const Table& table = GetTable();
  const size_t mask = table.slots.size() - 1;
  for (size_t i = FoldedHash(name) & mask;; i = (i + 1) & mask) {
    const int slot = table.slots[i];
    if (slot < 0) return nullptr;
    std::string_view candidate = table.names[static_cast<size_t>(slot)];
    if (candidate.size() != name.size()) continue;
    size_t k = 0;
    while (k < name.size() && Fold(name[k]) == static_cast<unsigned char>(candidate[k])) ++k;
    if (k == name.size()) {
      if (id != nullptr) *id = slot;
      return table.all[static_cast<size_t>(slot)];
    }
  }
}

const std::vector<const CommandSpec*>& AllCommands() { return GetTable().all; }

namespace {
// The 1-based position of `sub` (any case) in a "get|set|help" list, or 0.
uint32_t SubcommandIndex(std::string_view list, std::string_view sub) {
  uint32_t index = 1;
  while (true) {
    const size_t bar = list.find('|');
    const std::string_view item = list.substr(0, bar);
    if (item.size() == sub.size() &&
        std::equal(item.begin(), item.end(), sub.begin(),
                   [](char a, char b) { return static_cast<unsigned char>(a) == Fold(b); })) {
      return index;
    }
    if (bar == std::string_view::npos) return 0;
    list.remove_prefix(bar + 1);
    ++index;
  }
}
}  // namespace

uint32_t CommandRefOf(const CommandSpec* spec, int id, const Args& argv) {
  if (spec == nullptr || id < 0) return kNoCommandRef;
  const uint32_t command = static_cast<uint32_t>(id + 1) << 8;
  if (spec->subcommands == nullptr || argv.size() < 2) return command;
  const uint32_t sub = SubcommandIndex(spec->subcommands, argv[1]);
  return sub == 0 || sub > 0xff ? kNoCommandRef : command | sub;
}

std::string CommandRefName(uint32_t ref) {
  const auto& all = GetTable().all;
  const uint32_t command = ref >> 8;
  if (command == 0 || command > all.size()) return "NULL";
  const CommandSpec& spec = *all[command - 1];
  std::string name = spec.name;
  uint32_t sub = ref & 0xff;
  if (sub == 0 || spec.subcommands == nullptr) return name;
  std::string_view list = spec.subcommands;
  for (; sub > 1 && list.find('|') != std::string_view::npos; --sub) {
    list.remove_prefix(list.find('|') + 1);
  }
  name.push_back('|');
  name.append(list.substr(0, list.find('|')));
  return name;
}

std::vector<std::string_view> CommandKeys(const CommandSpec& spec, const Args& argv) {
  if (spec.find_keys != nullptr) return spec.find_keys(argv);
  std::vector<std::string_view> keys;
  AppendCommandKeys(spec, argv, &keys);
  return keys;
}

void AppendCommandKeys(const CommandSpec& spec, const Args& argv,
                       std::vector<std::string_view>* keys) {
  if (spec.find_keys != nullptr) {
    for (auto key : spec.find_keys(argv)) keys->push_back(key);
    return;
  }
  if (spec.first_key <= 0) return;
  int last = spec.last_key < 0 ? static_cast<int>(argv.size()) + spec.last_key : spec.last_key;
  int step = spec.key_step > 0 ? spec.key_step : 1;
  for (int i = spec.first_key; i <= last && i < static_cast<int>(argv.size()); i += step) {
    keys->emplace_back(argv[static_cast<size_t>(i)]);
  }
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
