// COMMAND, COMMAND COUNT / INFO / DOCS / LIST / GETKEYS / GETKEYSANDFLAGS / HELP in Redis 7's
// reply shapes. What rockcache runs (name, arity, key positions) comes from the command table;
// Redis's descriptive fields (flags, ACL categories, tips, docs) from command_meta.inc, generated
// from redis-server 7.0 by scripts/gen-command-meta.py.
#include "server/commands/command_docs.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <string>
#include <string_view>
#include <unordered_map>

#include "config/glob.h"
#include "server/commands/args.h"
#include "server/commands/command.h"
#include "server/commands/key_specs.h"
#include "server/commands/numkeys.h"
#include "server/commands/subcommand.h"
#include "server/protocol/reply.h"

namespace rockcache::server {
namespace {

struct CommandMeta {
  const char* name;                          // "config|get" for a subcommand
  int arity, first_key, last_key, key_step;  // used for subcommands (rockcache's table has its own)
  const char* flags;                         // space-separated, Redis's order
  const char* acl;                           // "@read @string @fast"
  const char* tips;
  const char* group;
  const char* since;
  const char* complexity;
  const char* summary;
};

const CommandMeta kCommandMeta[] = {
#include "server/commands/command_meta.inc"
};

const CommandMeta* FindMeta(std::string_view name) {
  static const auto* index = [] {
    auto* map = new std::unordered_map<std::string_view, const CommandMeta*>();
    for (const auto& meta : kCommandMeta) map->emplace(meta.name, &meta);
    return map;
  }();
  auto it = index->find(name);
  return it == index->end() ? nullptr : it->second;
}

std::vector<std::string_view> Words(const char* text) {
  std::vector<std::string_view> words;
  std::string_view rest = text;
  while (!rest.empty()) {
    size_t space = rest.find(' ');
    if (space != 0) words.push_back(rest.substr(0, space));
    if (space == std::string_view::npos) break;
    rest.remove_prefix(space + 1);
  }
  return words;
}

}  // namespace

bool SubcommandWrites(const CommandSpec& spec, std::string_view sub) {
  if (spec.subcommands == nullptr) return false;
  std::string name = spec.name;
  name.push_back('|');
  for (char c : sub) name.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  const CommandMeta* meta = FindMeta(name);
  if (meta == nullptr) return false;
  for (auto word : Words(meta->flags)) {
    if (word == "write") return true;
  }
  return false;
}

namespace {

// Flags and categories: statuses in a set (an array under RESP2), as Redis 7.0.
void AppendSimpleArray(std::string* out, const std::vector<std::string_view>& items) {
  AppendSetHeader(out, static_cast<int64_t>(items.size()));
  for (auto item : items) AppendSimple(out, item);
}

// Flags of a command Redis does not have, from rockcache's own flags.
std::vector<std::string_view> DerivedFlags(uint32_t flags) {
  std::vector<std::string_view> names;
  if (flags & kWrite) names.push_back("write");
  if (flags & kReadOnly) names.push_back("readonly");
  if (flags & kAdmin) names.push_back("admin");
  if (flags & kNoAuth) names.push_back("no_auth");
  if (flags & kFast) names.push_back("fast");
  return names;
}

// What one COMMAND INFO entry shows.
struct InfoEntry {
  std::string name;
  int arity = 0, first_key = 0, last_key = 0, key_step = 0;
  bool write = false;
  // Keys after a numkeys argument (ZUNION, LMPOP...): its argv index, 0 for none. With 2, argv[1]
  // is a destination (ZUNIONSTORE...).
  int numkeys_index = 0;
  std::vector<std::string_view> flags, acl, tips;
};

InfoEntry FromMeta(const CommandMeta& meta) {
  InfoEntry e;
  e.name = meta.name;
  e.arity = meta.arity;
  e.first_key = meta.first_key;
  e.last_key = meta.last_key;
  e.key_step = meta.key_step;
  e.flags = Words(meta.flags);
  e.write = std::find(e.flags.begin(), e.flags.end(), "write") != e.flags.end();
  e.acl = Words(meta.acl);
  e.tips = Words(meta.tips);
  return e;
}

// The subcommands rockcache implements that Redis 7.0 has, as "container|sub" metadata rows.
std::vector<const CommandMeta*> Subcommands(const CommandSpec& spec) {
  std::vector<const CommandMeta*> out;
  if (spec.subcommands == nullptr) return out;
  std::string list = spec.subcommands;
  size_t start = 0;
  while (start <= list.size()) {
    size_t bar = std::min(list.find('|', start), list.size());
    if (const CommandMeta* meta =
            FindMeta(std::string(spec.name) + "|" + list.substr(start, bar - start))) {
      out.push_back(meta);
    }
    start = bar + 1;
  }
  return out;
}

// A key spec up to its find_keys spec map: flags, begin_search by `index`, find_keys of
// `find_type` ("range" or "keynum"); the caller appends the spec map's 3 pairs.
void AppendKeySpecHead(std::string* out, const std::vector<std::string_view>& flags, int index,
                       const char* find_type) {
  AppendMapHeader(out, 3);
  AppendBulk(out, "flags");
  AppendSimpleArray(out, flags);
  AppendBulk(out, "begin_search");
  AppendMapHeader(out, 2);
  AppendBulk(out, "type");
  AppendBulk(out, "index");
  AppendBulk(out, "spec");
  AppendMapHeader(out, 1);
  AppendBulk(out, "index");
  AppendInteger(out, index);
  AppendBulk(out, "find_keys");
  AppendMapHeader(out, 2);
  AppendBulk(out, "type");
  AppendBulk(out, find_type);
  AppendBulk(out, "spec");
}

// The key spec of keys after numkeys (Redis's begin_search index + find_keys keynum).
void AppendKeyNumSpec(std::string* out, const InfoEntry& e) {
  if (e.write && e.numkeys_index == 1) {  // LMPOP, ZMPOP
    AppendKeySpecHead(out, {"RW", "access", "delete"}, e.numkeys_index, "keynum");
  } else {
    AppendKeySpecHead(out, {"RO", "access"}, e.numkeys_index, "keynum");
  }
  AppendMapHeader(out, 3);
  AppendBulk(out, "keynumidx");
  AppendInteger(out, 0);
  AppendBulk(out, "firstkey");
  AppendInteger(out, 1);
  AppendBulk(out, "keystep");
  AppendInteger(out, 1);
}

// One key spec from first/last/step (Redis's begin_search index + find_keys range), then the
// numkeys one.
void AppendKeySpecs(std::string* out, const InfoEntry& e) {
  if (FindMeta(e.name) != nullptr) return AppendKeySpecRows(out, KeySpecsOf(e.name));
  int specs = (e.first_key > 0 ? 1 : 0) + (e.numkeys_index > 0 ? 1 : 0);
  AppendSetHeader(out, specs);
  if (e.first_key <= 0) {
    if (e.numkeys_index > 0) AppendKeyNumSpec(out, e);
    return;
  }
  if (e.numkeys_index == 2) {  // the destination of ZUNIONSTORE...
    AppendKeySpecHead(out, {"OW", "update"}, e.first_key, "range");
  } else if (e.write) {
    AppendKeySpecHead(out, {"RW", "update"}, e.first_key, "range");
  } else {
    AppendKeySpecHead(out, {"RO", "access"}, e.first_key, "range");
  }
  AppendMapHeader(out, 3);
  AppendBulk(out, "lastkey");
  AppendInteger(out, e.last_key < 0 ? e.last_key : e.last_key - e.first_key);
  AppendBulk(out, "keystep");
  AppendInteger(out, e.key_step);
  AppendBulk(out, "limit");
  AppendInteger(out, 0);
  if (e.numkeys_index > 0) AppendKeyNumSpec(out, e);
}

void AppendInfoEntry(std::string* out, const InfoEntry& e,
                     const std::vector<const CommandMeta*>& subcommands) {
  AppendArrayHeader(out, 10);
  AppendBulk(out, e.name);
  AppendInteger(out, e.arity);
  AppendSimpleArray(out, e.flags);
  AppendInteger(out, e.first_key);
  AppendInteger(out, e.last_key);
  AppendInteger(out, e.key_step);
  AppendSimpleArray(out, e.acl);
  AppendSetHeader(out, static_cast<int64_t>(e.tips.size()));  // tips are bulk strings
  for (auto tip : e.tips) AppendBulk(out, tip);
  AppendKeySpecs(out, e);
  AppendSetHeader(out, static_cast<int64_t>(subcommands.size()));
  for (const CommandMeta* sub : subcommands) AppendInfoEntry(out, FromMeta(*sub), {});
}

// Name, arity and keys from rockcache's table; the rest from Redis's metadata when it has the
// command.
void AppendCommandInfo(std::string* out, const CommandSpec& spec) {
  const CommandMeta* meta = FindMeta(spec.name);
  InfoEntry e = meta ? FromMeta(*meta) : InfoEntry{};
  e.name = spec.name;
  e.arity = spec.arity;
  e.first_key = spec.first_key;
  e.last_key = spec.last_key;
  e.key_step = spec.key_step;
  e.write = (spec.flags & kWrite) != 0;
  if (spec.find_keys == NumKeysAt1) e.numkeys_index = 1;
  if (spec.find_keys == DestinationAndNumKeysAt2) e.numkeys_index = 2;
  if (meta == nullptr) e.flags = DerivedFlags(spec.flags);
  AppendInfoEntry(out, e, Subcommands(spec));
}

void AppendDocFields(std::string* out, const CommandMeta* meta, bool subcommands) {
  AppendMapHeader(out, subcommands ? 5 : 4);
  AppendBulk(out, "summary");
  AppendBulk(out, meta ? meta->summary : "");
  AppendBulk(out, "since");
  AppendBulk(out, meta ? meta->since : "");
  AppendBulk(out, "group");
  AppendBulk(out, meta ? meta->group : "server");
  AppendBulk(out, "complexity");
  AppendBulk(out, meta ? meta->complexity : "");
}

void AppendCommandDocs(std::string* out, const CommandSpec& spec) {
  auto subcommands = Subcommands(spec);
  AppendBulk(out, spec.name);
  AppendDocFields(out, FindMeta(spec.name), !subcommands.empty());
  if (subcommands.empty()) return;
  AppendBulk(out, "subcommands");
  AppendMapHeader(out, static_cast<int64_t>(subcommands.size()));
  for (const CommandMeta* sub : subcommands) {
    AppendBulk(out, sub->name);
    AppendDocFields(out, sub, false);
  }
}

bool InAclCategory(const CommandSpec& spec, const std::string& category) {
  const CommandMeta* meta = FindMeta(spec.name);
  if (meta == nullptr) return false;
  for (auto word : Words(meta->acl)) {
    if (word.size() == category.size() + 1 &&
        strncasecmp(word.data() + 1, category.c_str(), category.size()) == 0) {
      return true;
    }
  }
  return false;
}

void CommandList(const Args& argv, std::string* out) {
  const auto& all = AllCommands();
  std::vector<const CommandSpec*> specs;
  if (argv.size() == 2) {
    specs = all;
  } else if (argv.size() == 5 && Is(argv[2], "FILTERBY")) {
    const std::string& value = argv[4];
    if (Is(argv[3], "MODULE")) {
      // rockcache has no modules.
    } else if (Is(argv[3], "ACLCAT")) {
      for (const auto* spec : all) {
        if (InAclCategory(*spec, value)) specs.push_back(spec);
      }
    } else if (Is(argv[3], "PATTERN")) {
      for (const auto* spec : all) {
        if (GlobMatch(value, spec->name, /*nocase=*/true)) specs.push_back(spec);
      }
    } else {
      return out->append(kReplySyntaxError), void();
    }
  } else {
    return out->append(kReplySyntaxError), void();
  }
  AppendArrayHeader(out, static_cast<int64_t>(specs.size()));
  for (const auto* spec : specs) AppendBulk(out, spec->name);
}

void CommandGetKeys(const Args& argv, bool with_flags, std::string* out) {
  const CommandSpec* spec = FindCommand(argv[2]);
  if (spec == nullptr) return AppendError(out, "ERR Invalid command specified");
  Args sub(argv.begin() + 2, argv.end());
  if (!ArityOk(*spec, sub.size())) {
    return AppendError(out, "ERR Invalid number of arguments specified for command");
  }
  auto keys = CommandKeys(*spec, sub);
  if (keys.empty()) keys = SubcommandKeys(*spec, sub);  // OBJECT ENCODING key
  if (keys.empty()) return AppendError(out, "ERR The command has no key arguments");
  AppendArrayHeader(out, static_cast<int64_t>(keys.size()));
  if (!with_flags) {
    for (auto key : keys) AppendBulk(out, key);
    return;
  }
  const auto flags = KeyFlags(*spec, sub, keys);
  for (size_t i = 0; i < keys.size(); ++i) {
    AppendArrayHeader(out, 2);
    AppendBulk(out, keys[i]);
    AppendSimpleArray(out, flags[i]);
  }
}

void Command(CommandContext&, Args& argv, std::string* out) {
  const auto& all = AllCommands();
  if (argv.size() == 1) {
    AppendArrayHeader(out, static_cast<int64_t>(all.size()));
    for (const auto* spec : all) AppendCommandInfo(out, *spec);
    return;
  }
  const std::string& sub = argv[1];
  if (Is(sub, "COUNT") && argv.size() == 2) {
    return AppendInteger(out, static_cast<int64_t>(all.size()));
  }
  if (Is(sub, "INFO")) {
    if (argv.size() == 2) {
      AppendArrayHeader(out, static_cast<int64_t>(all.size()));
      for (const auto* spec : all) AppendCommandInfo(out, *spec);
      return;
    }
    AppendArrayHeader(out, static_cast<int64_t>(argv.size() - 2));
    for (size_t i = 2; i < argv.size(); ++i) {
      const CommandSpec* spec = FindCommand(argv[i]);
      if (spec == nullptr) {
        out->append(NullArrayReply());
      } else {
        AppendCommandInfo(out, *spec);
      }
    }
    return;
  }
  if (Is(sub, "DOCS")) {
    std::vector<const CommandSpec*> specs;
    if (argv.size() == 2) {
      specs = all;
    } else {
      for (size_t i = 2; i < argv.size(); ++i) {
        if (const CommandSpec* spec = FindCommand(argv[i])) specs.push_back(spec);
      }
    }
    AppendMapHeader(out, static_cast<int64_t>(specs.size()));
    for (const auto* spec : specs) AppendCommandDocs(out, *spec);
    return;
  }
  if (Is(sub, "LIST")) return CommandList(argv, out);
  // Redis 7.0's arity for both is -4: a command name and at least one argument.
  if (Is(sub, "GETKEYS") || Is(sub, "GETKEYSANDFLAGS")) {
    if (argv.size() < 4) return AppendArityError(out, "command|" + sub);
    return CommandGetKeys(argv, Is(sub, "GETKEYSANDFLAGS"), out);
  }
  if (Is(sub, "HELP") && argv.size() == 2) {
    return AppendHelp(out,
                      {"COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
                       "(no subcommand)",
                       "    Return details about all Redis commands.",
                       "COUNT",
                       "    Return the total number of commands in this Redis server.",
                       "LIST",
                       "    Return a list of all commands in this Redis server.",
                       "INFO [<command-name> ...]",
                       "    Return details about multiple Redis commands.",
                       "    If no command names are given, documentation details for all",
                       "    commands are returned.",
                       "DOCS [<command-name> ...]",
                       "    Return documentation details about multiple Redis commands.",
                       "    If no command names are given, documentation details for all",
                       "    commands are returned.",
                       "GETKEYS <full-command>",
                       "    Return the keys from a full Redis command.",
                       "GETKEYSANDFLAGS <full-command>",
                       "    Return the keys and the access flags from a full Redis command.",
                       "LIST [FILTERBY (MODULE <module-name>|ACLCAT <category>|PATTERN <pattern>)]",
                       "    Return a list of all commands in this Redis server.",
                       "HELP",
                       "    Prints this help."});
  }
  AppendSubcommandError(out, argv,
                        {"COUNT", "INFO", "DOCS", "LIST", "GETKEYS", "GETKEYSANDFLAGS", "HELP"});
}

}  // namespace

// clang-format off
const std::vector<CommandSpec> kCommandDocsCommands = {
    {"command", -1, kConnection, 0, 0, 0, Command, nullptr,
     "count|docs|getkeys|getkeysandflags|info|list|help"},
};
// clang-format on

}  // namespace rockcache::server
