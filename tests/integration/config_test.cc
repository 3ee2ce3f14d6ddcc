// Start-up configuration: bad config files and flags make the binary exit non-zero with a useful
// message; a good config file works and command-line flags override it.
//
// These run the binary directly (not through TestServer); ServerProcess makes sure no process is
// left behind, whatever happens.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/test_helpers.h"
#include "tests/support/test_server.h"

using rockcache::testing::Client;
using rockcache::testing::Contains;
using rockcache::testing::FreePort;
using rockcache::testing::MakeTempDir;
using rockcache::testing::RemoveTree;
using rockcache::testing::Reply;
using rockcache::testing::Run;
using rockcache::testing::ServerBinary;
using rockcache::testing::SleepMs;

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace config_test {

namespace {

// The server binary run with `args`, stdout+stderr to a file. Killed (SIGKILL) and reaped by the
// destructor if still running.
class ServerProcess {
 public:
  ServerProcess(const std::string& dir, const std::vector<std::string>& args)
      : log_path_(dir + "/server.log") {
    std::vector<std::string> argv = {ServerBinary()};
    argv.insert(argv.end(), args.begin(), args.end());
    pid_ = fork();
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      int log = open(log_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(log, 1);
      dup2(log, 2);
      std::vector<char*> cargv;
      for (auto& a : argv) cargv.push_back(a.data());
      cargv.push_back(nullptr);
      execv(cargv[0], cargv.data());
      _exit(127);
    }
  }
  ~ServerProcess() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      int status = 0;
      waitpid(pid_, &status, 0);
    }
  }
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  // Exit code once the process ended by itself within timeout_ms; -1 if still running.
  int WaitExit(int timeout_ms) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (pid_ > 0 && std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      SleepMs(10);
    }
    return -1;
  }
  int Terminate() {
    if (pid_ <= 0) return -1;
    kill(pid_, SIGTERM);
    return WaitExit(20000);
  }
  // True once `port` accepts connections (false if the process exited or 20 s passed).
  bool WaitListening(int port) {
    for (int i = 0; i < 1000 && pid_ > 0; ++i) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return false;
      }
      Client probe(port, 1000);
      if (probe.connected()) return true;
      SleepMs(20);
    }
    return false;
  }
  std::string Output() const {
    std::ifstream in(log_path_);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

 private:
  std::string log_path_;
  pid_t pid_ = -1;
};

// A temp dir removed at scope exit.
struct TempDir {
  std::string path = MakeTempDir();
  ~TempDir() { RemoveTree(path); }
};

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
}

}  // namespace

TEST_CASE("a bad value in the config file stops start-up and names file, line and option",
          "[config]") {
  TempDir tmp;
  std::string conf = tmp.path + "/bad.conf";
  WriteFile(conf, "# a config with a mistake\nbind 127.0.0.1\nport notanumber\ndir " + tmp.path +
                      "/db\n");
  ServerProcess server(tmp.path, {conf});
  int code = server.WaitExit(10000);
  std::string out = server.Output();
  INFO(out);
  CHECK(code != -1);  // it exited by itself
  CHECK(code != 0);
  // The file and line, as "<file>:3" or Redis's "at line 3", and the option.
  CHECK(Contains(out, conf));
  CHECK((Contains(out, conf + ":3") || Contains(out, "line 3")));
  CHECK(Contains(out, "port"));
}

TEST_CASE("an unknown option in the config file stops start-up", "[config]") {
  TempDir tmp;
  std::string conf = tmp.path + "/unknown.conf";
  WriteFile(conf,
            "port " + std::to_string(FreePort()) + "\ndir " + tmp.path + "/db\nbogus-option 1\n");
  ServerProcess server(tmp.path, {conf});
  int code = server.WaitExit(10000);
  std::string out = server.Output();
  INFO(out);
  CHECK(code > 0);
  CHECK(Contains(out, conf));
  CHECK((Contains(out, conf + ":3") || Contains(out, "line 3")));
  CHECK(Contains(out, "bogus-option"));
}

TEST_CASE("a missing config file stops start-up", "[config]") {
  TempDir tmp;
  std::string conf = tmp.path + "/does-not-exist.conf";
  ServerProcess server(tmp.path, {conf, "--port", std::to_string(FreePort())});
  int code = server.WaitExit(10000);
  INFO(server.Output());
  CHECK(code > 0);
  CHECK(Contains(server.Output(), conf));
}

TEST_CASE("unknown or bad command-line flags stop start-up", "[config]") {
  TempDir tmp;
  int port = FreePort();
  {
    ServerProcess server(tmp.path, {"--port", std::to_string(port), "--dir", tmp.path + "/db",
                                    "--nosuchoption", "1"});
    int code = server.WaitExit(10000);
    INFO(server.Output());
    CHECK(code > 0);
    CHECK(Contains(server.Output(), "nosuchoption"));
  }
  {
    ServerProcess server(tmp.path, {"--port", "abc", "--dir", tmp.path + "/db"});
    int code = server.WaitExit(10000);
    INFO(server.Output());
    CHECK(code > 0);
    CHECK(Contains(server.Output(), "port"));
  }
  {
    ServerProcess server(tmp.path, {"--port", std::to_string(port), "--dir", tmp.path + "/db",
                                    "--pool-mode", "fastest"});
    int code = server.WaitExit(10000);
    INFO(server.Output());
    CHECK(code > 0);
    CHECK(Contains(server.Output(), "pool-mode"));
  }
}

TEST_CASE("a good config file with a flag override", "[config]") {
  TempDir tmp;
  int port = FreePort();
  std::string conf = tmp.path + "/good.conf";
  WriteFile(conf,
            "# test config\n"
            "bind 127.0.0.1\n"
            "port " +
                std::to_string(port) + "\ndir " + tmp.path +
                "/db\n"
                "maxclients 77\n"
                "hz 15\n"
                "\n"
                "proto-max-bulk-len 2mb\n"
                "pool-mode classic\n");
  ServerProcess server(tmp.path, {conf, "--hz", "25", "--maxclients", "88"});
  REQUIRE(server.WaitListening(port));
  Client c(port);
  CHECK(Run(c, {"CONFIG", "GET", "hz"}) == "[bulk:hz, bulk:25]");  // the flag wins
  CHECK(Run(c, {"CONFIG", "GET", "maxclients"}) == "[bulk:maxclients, bulk:88]");
  CHECK(Run(c, {"CONFIG", "GET", "port"}) == "[bulk:port, bulk:" + std::to_string(port) + "]");
  CHECK(Run(c, {"CONFIG", "GET", "proto-max-bulk-len"}) ==
        "[bulk:proto-max-bulk-len, bulk:2097152]");
  CHECK(Run(c, {"CONFIG", "GET", "pool-mode"}) == "[bulk:pool-mode, bulk:classic]");
  CHECK(Run(c, {"CONFIG", "GET", "dir"}) == "[bulk:dir, bulk:" + tmp.path + "/db]");
  std::string info = c.Command({"INFO", "server"}).str;
  CHECK(Contains(info, "config_file:" + conf + "\r\n"));
  // It works in classic pool mode too.
  CHECK(Run(c, {"SET", "a", "1"}) == "status:OK");
  CHECK(Run(c, {"GET", "a"}) == "bulk:1");
  CHECK(server.Terminate() == 0);
}

TEST_CASE("Redis's parameters answer CONFIG GET and SET", "[config][redis]") {
  rockcache::testing::TestServer server;
  Client c(server.port());
  // What redis-benchmark and other tools probe.
  CHECK(Run(c, {"CONFIG", "GET", "save"}) == "[bulk:save, bulk:]");
  CHECK(Run(c, {"CONFIG", "GET", "appendonly"}) == "[bulk:appendonly, bulk:yes]");
  CHECK(Run(c, {"CONFIG", "GET", "save", "appendonly", "sav*"}) ==
        "[bulk:save, bulk:, bulk:appendonly, bulk:yes]");
  // Mapped: one setting under two names.
  CHECK(Run(c, {"CONFIG", "SET", "maxmemory", "10mb"}) == "status:OK");
  CHECK(Run(c, {"CONFIG", "GET", "cache-maxmemory"}) == "[bulk:cache-maxmemory, bulk:10485760]");
  CHECK(Run(c, {"CONFIG", "SET", "cache-maxmemory", "20mb"}) == "status:OK");
  CHECK(Run(c, {"CONFIG", "GET", "maxmemory"}) == "[bulk:maxmemory, bulk:20971520]");
  CHECK(Run(c, {"CONFIG", "SET", "maxmemory-policy", "allkeys-lfu"}) == "status:OK");
  CHECK(Run(c, {"CONFIG", "GET", "cache-policy"}) == "[bulk:cache-policy, bulk:allkeys-lfu]");
  CHECK(Run(c, {"CONFIG", "SET", "maxmemory-policy", "noeviction"})
            .rfind("err:ERR CONFIG SET failed (possibly related to argument 'maxmemory-policy') - ",
                   0) == 0);
  // Reported: only the truth.
  CHECK(Run(c, {"CONFIG", "SET", "appendonly", "no"})
            .rfind("err:ERR CONFIG SET failed (possibly related to argument 'appendonly') - it is "
                   "always "
                   "'yes' in rockcache",
                   0) == 0);
  CHECK(Run(c, {"CONFIG", "SET", "save", ""}) == "status:OK");
  // Stored without effect, validated as Redis.
  CHECK(Run(c, {"CONFIG", "SET", "hash-max-listpack-entries", "128"}) == "status:OK");
  CHECK(Run(c, {"CONFIG", "GET", "hash-max-ziplist-entries"}) ==
        "[bulk:hash-max-ziplist-entries, bulk:128]");
  CHECK(Run(c, {"CONFIG", "SET", "hash-max-listpack-entries", "abc"}) ==
        "err:ERR CONFIG SET failed (possibly related to argument 'hash-max-listpack-entries') - "
        "argument couldn't be parsed into an integer");
  CHECK(Run(c, {"CONFIG", "SET", "lazyfree-lazy-user-del", "yes"}) == "status:OK");
  // Several pairs: all or nothing.
  CHECK(Run(c, {"CONFIG", "SET", "hz", "30", "activerehashing", "maybe"}) ==
        "err:ERR CONFIG SET failed (possibly related to argument 'activerehashing') - argument "
        "must be 'yes' or 'no'");
  CHECK(Run(c, {"CONFIG", "GET", "hz"}) == "[bulk:hz, bulk:10]");
  CHECK(Run(c, {"CONFIG", "SET", "hz", "30", "list-compress-depth", "2"}) == "status:OK");
  CHECK(Run(c, {"CONFIG", "GET", "hz", "list-compress-depth"}) ==
        "[bulk:hz, bulk:30, bulk:list-compress-depth, bulk:2]");
  CHECK(Run(c, {"CONFIG", "SET", "hz", "1", "hz", "2"}) ==
        "err:ERR CONFIG SET failed (possibly related to argument 'hz') - duplicate parameter");
  CHECK(Run(c, {"CONFIG", "SET", "nosuch", "1"}) ==
        "err:ERR Unknown option or number of arguments for CONFIG SET - 'nosuch'");
  CHECK(Run(c, {"CONFIG", "SET", "hz"}) ==
        "err:ERR wrong number of arguments for 'config|set' command");
  CHECK(Run(c, {"CONFIG", "REWRITE"}) == "err:ERR The server is running without a config file");
  // Every Redis 7.0 name is there.
  Reply all = c.Command({"CONFIG", "GET", "*"});
  CHECK(all.elements.size() >= 2 * 190);
}

TEST_CASE("CONFIG REWRITE rewrites the file the server started with", "[config][redis]") {
  TempDir tmp;
  int port = FreePort();
  std::string conf = tmp.path + "/rw.conf";
  std::string head = "# my rockcache\nport " + std::to_string(port) + "\ndir " + tmp.path +
                     "/db\nmetrics-port 0\n\n# the cache budget\nmaxmemory 1mb\nhz 10\n";
  WriteFile(conf, head + "# tail comment\n");
  {
    ServerProcess server(tmp.path, {conf});
    REQUIRE(server.WaitListening(port));
    Client c(port);
    REQUIRE(Run(c, {"CONFIG", "SET", "cache-maxmemory", "2mb", "hz", "20", "timeout", "30",
                    "hash-max-listpack-entries", "64"}) == "status:OK");
    REQUIRE(Run(c, {"CONFIG", "REWRITE"}) == "status:OK");
    CHECK(server.Terminate() == 0);
  }
  std::ifstream in(conf);
  std::stringstream text;
  text << in.rdbuf();
  CHECK(text.str() == "# my rockcache\nport " + std::to_string(port) + "\ndir " + tmp.path +
                          "/db\nmetrics-port 0\n\n# the cache budget\nmaxmemory 2097152\nhz 20\n"
                          "# tail comment\n# Generated by CONFIG REWRITE\ntimeout 30\n"
                          "hash-max-listpack-entries 64\n");
  ServerProcess again(tmp.path, {conf});
  REQUIRE(again.WaitListening(port));
  Client c(port);
  CHECK(Run(c, {"CONFIG", "GET", "maxmemory", "timeout"}) ==
        "[bulk:maxmemory, bulk:2097152, bulk:timeout, bulk:30]");
  CHECK(again.Terminate() == 0);
}

TEST_CASE("a config file may use Redis's names", "[config][redis]") {
  TempDir tmp;
  int port = FreePort();
  std::string conf = tmp.path + "/redis-names.conf";
  WriteFile(conf, "port " + std::to_string(port) + "\ndir " + tmp.path +
                      "/db\nmetrics-port 0\nmaxmemory 5mb\nmaxmemory-policy allkeys-lfu\n"
                      "appendonly yes\nsave \"\"\nappendfsync always\nhash-max-ziplist-entries 64\n"
                      "notify-keyspace-events Ex\nlist-max-ziplist-size -2\n");
  ServerProcess server(tmp.path, {conf, "--activerehashing", "no"});
  REQUIRE(server.WaitListening(port));
  Client c(port);
  CHECK(Run(c, {"CONFIG", "GET", "cache-maxmemory"}) == "[bulk:cache-maxmemory, bulk:5242880]");
  CHECK(Run(c, {"CONFIG", "GET", "cache-policy"}) == "[bulk:cache-policy, bulk:allkeys-lfu]");
  CHECK(Run(c, {"CONFIG", "GET", "storage-sync"}) == "[bulk:storage-sync, bulk:always]");
  CHECK(Run(c, {"CONFIG", "GET", "hash-max-listpack-entries"}) ==
        "[bulk:hash-max-listpack-entries, bulk:64]");
  CHECK(Run(c, {"CONFIG", "GET", "notify-keyspace-events"}) ==
        "[bulk:notify-keyspace-events, bulk:xE]");
  CHECK(Run(c, {"CONFIG", "GET", "activerehashing"}) == "[bulk:activerehashing, bulk:no]");
  CHECK(server.Terminate() == 0);
}

TEST_CASE("a Redis value rockcache cannot honour stops start-up with the reason",
          "[config][redis]") {
  TempDir tmp;
  std::string conf = tmp.path + "/aof.conf";
  WriteFile(conf, "appendonly no\n");
  ServerProcess server(tmp.path, {conf, "--port", std::to_string(FreePort())});
  CHECK(server.WaitExit(20000) != 0);
  CHECK(Contains(server.Output(), "appendonly"));
  CHECK(Contains(server.Output(), "always 'yes'"));
}

}  // namespace config_test
