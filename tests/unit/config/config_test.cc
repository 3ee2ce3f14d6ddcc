#include "config/config.h"

#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "config/glob.h"
#include "config/split_args.h"

using rockcache::SplitArgs;
using rockcache::config::Config;
using rockcache::config::OptionTable;
using rockcache::config::ParseMemory;

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace config_test {

namespace {

std::string WriteTempFile(const std::string& text) {
  char path[] = "/tmp/rockcache-config-XXXXXX";
  int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  std::FILE* f = fdopen(fd, "w");
  std::fputs(text.c_str(), f);
  std::fclose(f);
  return path;
}

}  // namespace

TEST_CASE("defaults are the documented ones", "[config]") {
  Config config;
  CHECK(config.GetInt("port") == 6379);
  CHECK(config.GetString("bind") == "127.0.0.1");
  CHECK(config.GetString("dir") == "./data");
  CHECK(config.GetInt("proto-max-bulk-len") == 512ll * 1024 * 1024);
  CHECK(config.GetBool("protected-mode"));
  CHECK(config.Get("nosuch").empty());
}

TEST_CASE("memory sizes parse as Redis does", "[config]") {
  int64_t v = 0;
  CHECK((ParseMemory("100", &v) && v == 100));
  CHECK((ParseMemory("1k", &v) && v == 1000));
  CHECK((ParseMemory("1kb", &v) && v == 1024));
  CHECK((ParseMemory("512MB", &v) && v == 512ll << 20));
  CHECK((ParseMemory("2gb", &v) && v == 2ll << 30));
  CHECK_FALSE(ParseMemory("12xb", &v));
  CHECK_FALSE(ParseMemory("", &v));
  CHECK_FALSE(ParseMemory("mb", &v));
}

TEST_CASE("Set validates type, bounds and runtime mutability", "[config]") {
  Config config;
  CHECK(config.Set("port", "6380").ok());
  CHECK(config.GetInt("port") == 6380);
  CHECK_FALSE(config.Set("port", "70000").ok());
  CHECK_FALSE(config.Set("port", "abc").ok());
  CHECK(config.GetInt("port") == 6380);
  CHECK_FALSE(config.Set("protected-mode", "maybe").ok());
  CHECK(config.Set("PROTECTED-MODE", "No").ok());
  CHECK(config.Get("protected-mode") == "no");
  CHECK_FALSE(config.Set("pool-mode", "turbo").ok());
  CHECK(config.Set("pool-mode", "classic").ok());
  CHECK(config.Set("proto-max-bulk-len", "2mb").ok());
  CHECK(config.Get("proto-max-bulk-len") == "2097152");
  auto immutable = config.Set("port", "6390", /*from_config_set=*/true);
  CHECK_FALSE(immutable.ok());
  CHECK(config.Set("timeout", "5", /*from_config_set=*/true).ok());
  CHECK_FALSE(config.Set("nosuch", "1").ok());
}

TEST_CASE("OnChange callbacks see canonical values", "[config]") {
  Config config;
  std::string seen;
  config.OnChange(
      [&](const std::string& name, const std::string& value) { seen = name + "=" + value; });
  REQUIRE(config.Set("maxclients", "42").ok());
  CHECK(seen == "maxclients=42");
}

TEST_CASE("config files: comments, quotes, errors name file and line", "[config]") {
  std::string path =
      WriteTempFile("# a comment\n\nport 7000\nrequirepass \"with space\"\nbind 127.0.0.1 ::1\n");
  Config config;
  REQUIRE(config.LoadFile(path).ok());
  CHECK(config.GetInt("port") == 7000);
  CHECK(config.GetString("requirepass") == "with space");
  CHECK(config.GetString("bind") == "127.0.0.1 ::1");
  std::remove(path.c_str());

  std::string bad = WriteTempFile("port 7000\n\nmaxclients lots\n");
  Config config2;
  auto status = config2.LoadFile(bad);
  REQUIRE_FALSE(status.ok());
  CHECK(status.message().find(bad + ":3") != std::string::npos);
  CHECK(status.message().find("maxclients") != std::string::npos);
  std::remove(bad.c_str());

  std::string unknown = WriteTempFile("nosuchoption 1\n");
  Config config3;
  auto status3 = config3.LoadFile(unknown);
  REQUIRE_FALSE(status3.ok());
  CHECK(status3.message().find(":1") != std::string::npos);
  std::remove(unknown.c_str());
}

TEST_CASE("command line: file then flags, flags win", "[config]") {
  std::string path = WriteTempFile("port 7000\ntimeout 3\n");
  const char* argv[] = {"rockcache-server", path.c_str(), "--port", "7001",
                        "--bind",           "127.0.0.1",  "::1"};
  Config config;
  REQUIRE(config.LoadFromArgs(7, argv).ok());
  CHECK(config.GetInt("port") == 7001);
  CHECK(config.GetInt("timeout") == 3);
  CHECK(config.GetString("bind") == "127.0.0.1 ::1");
  CHECK(config.config_file() == path);
  std::remove(path.c_str());

  const char* bad[] = {"rockcache-server", "--port"};
  Config config2;
  CHECK_FALSE(config2.LoadFromArgs(2, bad).ok());
  const char* unknown[] = {"rockcache-server", "--nosuch", "1"};
  CHECK_FALSE(config2.LoadFromArgs(3, unknown).ok());
}

TEST_CASE("CONFIG GET globs", "[config]") {
  Config config;
  auto pool = config.Match("pool-*");
  CHECK(pool.size() >= 8);
  for (const auto& [name, value] : pool) CHECK(name.rfind("pool-", 0) == 0);
  auto port = config.Match("PORT");
  REQUIRE(port.size() == 1);
  CHECK(port[0].second == "6379");
}

TEST_CASE("rockcache.conf documents every option at its default", "[config]") {
  std::ifstream in("rockcache.conf");
  REQUIRE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  Config documented;
  std::istringstream lines(text.str());
  std::string line;
  while (std::getline(lines, line)) REQUIRE(documented.ApplyLine(line).ok());
  Config defaults;
  for (const auto& spec : OptionTable()) {
    INFO(spec.name);
    // A mapped Redis name is shown commented out: it is the same setting as its target.
    std::string prefix = spec.kind == rockcache::config::OptionKind::kMapped ? "\n# " : "\n";
    CHECK(text.str().find(prefix + spec.name + " ") != std::string::npos);
    CHECK(documented.Get(spec.name) == defaults.Get(spec.name));
  }
}

TEST_CASE("SplitArgs handles quotes and escapes", "[config]") {
  auto args = SplitArgs("set \"a b\" 'c d' \"\\x41\\n\" plain");
  REQUIRE(args);
  REQUIRE(args->size() == 5);
  CHECK((*args)[1] == "a b");
  CHECK((*args)[2] == "c d");
  CHECK((*args)[3] == "A\n");
  CHECK_FALSE(SplitArgs("set \"unterminated"));
  CHECK_FALSE(SplitArgs("set \"a\"b"));
  CHECK(SplitArgs("   ")->empty());
}

}  // namespace config_test
