#include "server/commands/key_specs.h"

#include <strings.h>

#include <cctype>
#include <cstdlib>
#include <unordered_map>
#include <utility>

#include "server/protocol/reply.h"

namespace rockcache::server {
namespace {

const KeySpecRow kKeySpecs[] = {
#include "server/commands/key_specs.inc"
};

std::vector<std::string_view> Words(std::string_view text) {
  std::vector<std::string_view> words;
  while (!text.empty()) {
    const size_t space = text.find(' ');
    if (space != 0) words.push_back(text.substr(0, space));
    if (space == std::string_view::npos) break;
    text.remove_prefix(space + 1);
  }
  return words;
}

bool HasFlag(const KeySpecRow& row, std::string_view flag) {
  for (auto word : Words(row.flags)) {
    if (word == flag) return true;
  }
  return false;
}

struct Located {
  size_t pos;
  const KeySpecRow* row;
};

// Redis 7.0's getKeysUsingKeySpecs: the argument positions of the keys and their specs. False
// where Redis gives up on the specs (an unknown or incomplete spec, a bad numkeys, a range past
// the arguments) and asks the command's getkeys procedure instead.
bool KeysFromSpecs(const std::vector<const KeySpecRow*>& rows, const Args& argv,
                   std::vector<Located>* out) {
  const long argc = static_cast<long>(argv.size());
  for (const KeySpecRow* row : rows) {
    if (HasFlag(*row, "not_key")) continue;
    long first = 0;
    if (row->begin_search == 'i') {
      first = row->index;
    } else if (row->begin_search == 'k') {
      const long start = row->startfrom > 0 ? row->startfrom : argc + row->startfrom;
      const long end = row->startfrom > 0 ? argc - 1 : 1;
      for (long i = start; i != end; i = start <= end ? i + 1 : i - 1) {
        if (i >= argc || i < 1) break;
        if (strcasecmp(argv[static_cast<size_t>(i)].c_str(), row->keyword) == 0) {
          first = i + 1;
          break;
        }
      }
      if (first == 0) continue;  // keyword absent: no keys from this spec
    } else {
      return false;
    }
    long last = 0, step = 1;
    if (row->find_keys == 'r') {
      step = row->b;
      if (row->a >= 0) {
        last = first + row->a;
      } else if (row->c == 0) {
        last = argc + row->a;
      } else {
        last = first + ((argc - first) / row->c + row->a);
      }
    } else if (row->find_keys == 'n') {
      step = row->c;
      if (first + row->a >= argc) return false;
      char* end = nullptr;
      const std::string& text = argv[static_cast<size_t>(first + row->a)];
      const long long numkeys = std::strtoll(text.c_str(), &end, 10);
      if (text.empty() || *end != '\0' || numkeys < 0) return false;
      first += row->b;
      last = first + static_cast<long>(numkeys) - 1;
    } else {
      return false;
    }
    if (last >= argc || last < first || first >= argc) return false;
    for (long i = first; i <= last && step > 0; i += step) {
      out->push_back({static_cast<size_t>(i), row});
    }
    if (HasFlag(*row, "incomplete")) return false;
  }
  return true;
}

// Redis 7.0's getkeys procedures that flag keys (setGetKeys, bitfieldGetKeys, sortGetKeys,
// migrateGetKeys): the flags of the key at argument `pos`.
std::vector<std::string_view> ProcedureFlags(std::string_view command, const Args& argv,
                                             size_t pos) {
  if (command == "set") {
    for (size_t i = 3; i < argv.size(); ++i) {
      if (strcasecmp(argv[i].c_str(), "GET") == 0) return {"RW", "access", "update"};
    }
    return {"OW", "update"};
  }
  if (command == "bitfield") {
    bool readonly = true;
    for (size_t i = 2; i < argv.size(); ++i) {
      const size_t more = argv.size() - i - 1;
      const char* arg = argv[i].c_str();
      if (strcasecmp(arg, "get") == 0 && more >= 2) {
        i += 2;
      } else if (strcasecmp(arg, "overflow") == 0 && more >= 1) {
        i += 1;
      } else {
        readonly = false;  // SET / INCRBY, or a syntax error: not read-only
        break;
      }
    }
    if (readonly) return {"RO", "access"};
    return {"RW", "access", "update"};
  }
  if (command == "migrate") return {"RW", "access", "delete"};
  if (command == "sort" || command == "sort_ro") {
    if (pos == 1) return {"RO", "access"};
    return {"OW", "update"};  // SORT ... STORE dst
  }
  return {};
}

}  // namespace

std::vector<const KeySpecRow*> KeySpecsOf(std::string_view command) {
  static const auto* index = [] {
    auto* map = new std::unordered_map<std::string_view, std::vector<const KeySpecRow*>>();
    for (const auto& row : kKeySpecs) (*map)[row.command].push_back(&row);
    return map;
  }();
  auto it = index->find(command);
  return it == index->end() ? std::vector<const KeySpecRow*>() : it->second;
}

namespace {

// The key specs of the subcommand argv[1] of container `spec`; empty for other commands.
std::vector<const KeySpecRow*> SubcommandRows(const CommandSpec& spec, const Args& argv) {
  if (spec.subcommands == nullptr || argv.size() < 2) return {};
  std::string name = std::string(spec.name) + "|";
  for (char c : argv[1]) {
    name.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  return KeySpecsOf(name);
}

}  // namespace

std::vector<std::string_view> SubcommandKeys(const CommandSpec& spec, const Args& argv) {
  std::vector<std::string_view> keys;
  std::vector<Located> located;
  const auto rows = SubcommandRows(spec, argv);
  if (rows.empty() || !KeysFromSpecs(rows, argv, &located)) return keys;
  for (const Located& l : located) keys.push_back(argv[l.pos]);
  return keys;
}

void AppendKeySpecRows(std::string* out, const std::vector<const KeySpecRow*>& rows) {
  AppendSetHeader(out, static_cast<int64_t>(rows.size()));
  for (const KeySpecRow* row : rows) {
    const bool notes = row->notes[0] != '\0';
    AppendMapHeader(out, notes ? 4 : 3);
    if (notes) {
      AppendBulk(out, "notes");
      AppendBulk(out, row->notes);
    }
    AppendBulk(out, "flags");
    const auto flags = Words(row->flags);
    AppendSetHeader(out, static_cast<int64_t>(flags.size()));
    for (auto flag : flags) AppendSimple(out, flag);
    AppendBulk(out, "begin_search");
    AppendMapHeader(out, 2);
    AppendBulk(out, "type");
    if (row->begin_search == 'i') {
      AppendBulk(out, "index");
      AppendBulk(out, "spec");
      AppendMapHeader(out, 1);
      AppendBulk(out, "index");
      AppendInteger(out, row->index);
    } else if (row->begin_search == 'k') {
      AppendBulk(out, "keyword");
      AppendBulk(out, "spec");
      AppendMapHeader(out, 2);
      AppendBulk(out, "keyword");
      AppendBulk(out, row->keyword);
      AppendBulk(out, "startfrom");
      AppendInteger(out, row->startfrom);
    } else {
      AppendBulk(out, "unknown");
      AppendBulk(out, "spec");
      AppendMapHeader(out, 0);
    }
    AppendBulk(out, "find_keys");
    AppendMapHeader(out, 2);
    AppendBulk(out, "type");
    if (row->find_keys == 'u') {
      AppendBulk(out, "unknown");
      AppendBulk(out, "spec");
      AppendMapHeader(out, 0);
      continue;
    }
    const bool range = row->find_keys == 'r';
    AppendBulk(out, range ? "range" : "keynum");
    AppendBulk(out, "spec");
    AppendMapHeader(out, 3);
    AppendBulk(out, range ? "lastkey" : "keynumidx");
    AppendInteger(out, row->a);
    AppendBulk(out, range ? "keystep" : "firstkey");
    AppendInteger(out, row->b);
    AppendBulk(out, range ? "limit" : "keystep");
    AppendInteger(out, row->c);
  }
}

std::vector<std::vector<std::string_view>> KeyFlags(const CommandSpec& spec, const Args& argv,
                                                    const std::vector<std::string_view>& keys) {
  std::vector<const KeySpecRow*> rows = KeySpecsOf(spec.name);
  if (rows.empty()) rows = SubcommandRows(spec, argv);  // OBJECT ENCODING key
  bool variable = false;
  for (const KeySpecRow* row : rows) variable = variable || HasFlag(*row, "variable_flags");
  // The argument position of each key (keys are views into argv).
  std::vector<size_t> positions;
  for (auto key : keys) {
    size_t pos = 0;
    while (pos < argv.size() && argv[pos].data() != key.data()) ++pos;
    positions.push_back(pos);
  }
  std::vector<std::vector<std::string_view>> flags(keys.size());
  std::vector<Located> located;
  if (!variable && !rows.empty() && KeysFromSpecs(rows, argv, &located) &&
      located.size() == keys.size()) {
    bool same = true;
    for (size_t i = 0; i < keys.size() && same; ++i) same = located[i].pos == positions[i];
    if (same) {
      for (size_t i = 0; i < keys.size(); ++i) flags[i] = Words(located[i].row->flags);
      return flags;
    }
  }
  for (size_t i = 0; i < keys.size(); ++i) {
    flags[i] = ProcedureFlags(spec.name, argv, positions[i]);
    if (flags[i].empty()) {
      // A command whose specs disagree with its keys here: its first spec's flags, or the
      // command's own kind.
      if (!rows.empty()) {
        flags[i] = Words(rows.front()->flags);
      } else if (spec.flags & kWrite) {
        flags[i] = {"RW", "update"};
      } else {
        flags[i] = {"RO", "access"};
      }
    }
  }
  return flags;
}

}  // namespace rockcache::server
