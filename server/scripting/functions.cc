#include "server/scripting/functions.h"

#include <cctype>

namespace rockcache::server::scripting {
namespace {

bool ValidName(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

}  // namespace

Status ParseLibraryHeader(std::string_view code, std::string* name, size_t* body_offset) {
  if (code.size() < 2 || code[0] != '#' || code[1] != '!') {
    return Status::InvalidArgument("Missing library metadata");
  }
  const size_t eol = code.find('\n');
  if (eol == std::string_view::npos) return Status::InvalidArgument("Invalid library metadata");
  const std::string_view shebang = code.substr(2, eol - 2);
  *body_offset = eol;
  // "<engine> name=<lib>": the engine, then key=value parts separated by spaces.
  std::vector<std::string_view> parts;
  size_t pos = 0;
  while (pos < shebang.size()) {
    const size_t space = shebang.find(' ', pos);
    const size_t end = space == std::string_view::npos ? shebang.size() : space;
    if (end > pos) parts.push_back(shebang.substr(pos, end - pos));
    pos = end + 1;
  }
  bool named = false;
  name->clear();
  for (size_t i = 1; i < parts.size(); ++i) {
    if (parts[i].rfind("name=", 0) != 0) {
      return Status::InvalidArgument("Invalid metadata value given: " + std::string(parts[i]));
    }
    if (named) {
      return Status::InvalidArgument(
          "Invalid metadata value, name argument was given multiple times");
    }
    named = true;
    *name = std::string(parts[i].substr(5));
  }
  if (!named) return Status::InvalidArgument("Library name was not given");
  const std::string engine = parts.empty() ? "" : std::string(parts[0]);
  if (engine != "lua" && engine != "LUA") {
    return Status::InvalidArgument("Engine '" + engine + "' not found");
  }
  if (!ValidName(*name)) {
    return Status::InvalidArgument(
        "Library names can only contain letters, numbers, or underscores(_) and must be at "
        "least one character long");
  }
  return Status::OK();
}

Status ParseScriptShebang(std::string_view body, ScriptShebang* shebang, size_t* body_offset) {
  *shebang = ScriptShebang();
  *body_offset = 0;
  if (body.size() < 2 || body[0] != '#' || body[1] != '!') return Status::OK();
  shebang->present = true;
  const size_t eol = body.find('\n');
  const std::string_view line = body.substr(0, eol);
  *body_offset = eol == std::string_view::npos ? body.size() : eol;
  std::vector<std::string_view> parts;
  size_t pos = 0;
  while (pos < line.size()) {
    const size_t space = line.find(' ', pos);
    const size_t end = space == std::string_view::npos ? line.size() : space;
    if (end > pos) parts.push_back(line.substr(pos, end - pos));
    pos = end + 1;
  }
  if (parts.empty() || parts[0] != "#!lua") {
    return Status::InvalidArgument("Unexpected engine in script shebang: " +
                                   std::string(parts.empty() ? line : parts[0]));
  }
  for (size_t i = 1; i < parts.size(); ++i) {
    if (parts[i].rfind("flags=", 0) != 0) {
      return Status::InvalidArgument("Unknown lua shebang option: " + std::string(parts[i]));
    }
    std::string_view flags = parts[i].substr(6);
    while (!flags.empty()) {
      const size_t comma = flags.find(',');
      const std::string_view flag = flags.substr(0, comma);
      if (flag == "no-writes") {
        shebang->no_writes = true;
      } else if (flag != "allow-oom" && flag != "allow-stale" && flag != "no-cluster" &&
                 flag != "allow-cross-slot-keys") {
        return Status::InvalidArgument("Unexpected flag in script shebang: " + std::string(flag));
      }
      if (comma == std::string_view::npos) break;
      flags.remove_prefix(comma + 1);
    }
  }
  return Status::OK();
}

Status FunctionRegistry::Add(LibraryInfo library, bool replace) {
  MutexLock lock(&mu_);
  auto existing = libraries_.find(library.name);
  if (existing != libraries_.end() && !replace) {
    return Status::InvalidArgument("Library '" + library.name + "' already exists");
  }
  for (const FunctionInfo& fn : library.functions) {
    auto owner = function_lib_.find(fn.name);
    if (owner != function_lib_.end() && owner->second != library.name) {
      return Status::InvalidArgument("Function " + fn.name + " already exists");
    }
  }
  if (existing != libraries_.end()) {
    for (const FunctionInfo& fn : existing->second.functions) function_lib_.erase(fn.name);
  }
  for (const FunctionInfo& fn : library.functions) function_lib_[fn.name] = library.name;
  libraries_[library.name] = std::move(library);
  generation_.fetch_add(1, std::memory_order_release);
  return Status::OK();
}

std::vector<std::string> FunctionRegistry::ReplaceAll(std::vector<LibraryInfo> libraries) {
  std::vector<std::string> skipped;
  MutexLock lock(&mu_);
  libraries_.clear();
  function_lib_.clear();
  for (LibraryInfo& library : libraries) {
    bool clash = libraries_.count(library.name) != 0;
    for (const FunctionInfo& fn : library.functions) clash = clash || function_lib_.count(fn.name);
    if (clash) {
      skipped.push_back(library.name);
      continue;
    }
    for (const FunctionInfo& fn : library.functions) function_lib_[fn.name] = library.name;
    std::string name = library.name;
    libraries_[name] = std::move(library);
  }
  generation_.fetch_add(1, std::memory_order_release);
  return skipped;
}

Status FunctionRegistry::Delete(std::string_view name) {
  MutexLock lock(&mu_);
  auto it = libraries_.find(std::string(name));
  if (it == libraries_.end()) return Status::InvalidArgument("Library not found");
  for (const FunctionInfo& fn : it->second.functions) function_lib_.erase(fn.name);
  libraries_.erase(it);
  generation_.fetch_add(1, std::memory_order_release);
  return Status::OK();
}

void FunctionRegistry::Flush() {
  MutexLock lock(&mu_);
  libraries_.clear();
  function_lib_.clear();
  generation_.fetch_add(1, std::memory_order_release);
}

std::optional<FunctionInfo> FunctionRegistry::Find(std::string_view name) const {
  MutexLock lock(&mu_);
  auto owner = function_lib_.find(std::string(name));
  if (owner == function_lib_.end()) return std::nullopt;
  for (const FunctionInfo& fn : libraries_.at(owner->second).functions) {
    if (fn.name == name) return fn;
  }
  return std::nullopt;
}

std::vector<LibraryInfo> FunctionRegistry::List() const {
  MutexLock lock(&mu_);
  std::vector<LibraryInfo> out;
  out.reserve(libraries_.size());
  for (const auto& [name, library] : libraries_) out.push_back(library);
  return out;
}

size_t FunctionRegistry::library_count() const {
  MutexLock lock(&mu_);
  return libraries_.size();
}

size_t FunctionRegistry::function_count() const {
  MutexLock lock(&mu_);
  return function_lib_.size();
}

std::string LibraryRecordName(std::string_view library) {
  return std::string(kLibraryRecordPrefix) + std::string(library);
}

}  // namespace rockcache::server::scripting
