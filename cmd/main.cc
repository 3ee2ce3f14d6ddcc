// rockcache-server [configfile] [--name value ...]
// Loads the config, sets up logging, starts the server and waits for SIGINT/SIGTERM/SHUTDOWN.
#include <signal.h>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "config/config.h"
#include "server/clock.h"
#include "server/metrics/info.h"
#include "server/rdb_import.h"
#include "server/server.h"

namespace {

void PrintUsage() {
  std::fprintf(stderr,
               "Usage: rockcache-server [/path/to/rockcache.conf] [--option value ...]\n"
               "       rockcache-server [config] [--option value ...] --import-rdb dump.rdb\n"
               "         (loads a Redis RDB file into the store at `dir`, then exits)\n"
               "       rockcache-server --help | --version\n"
               "Options are those of rockcache.conf, e.g. --port 6380 --dir /tmp/data\n");
}

bool SetUpLogging(const rockcache::config::Config& config) {
  std::string logfile = config.GetString("logfile");
  try {
    auto logger = logfile.empty() ? spdlog::stdout_color_mt("rockcache")
                                  : spdlog::basic_logger_mt("rockcache", logfile);
    spdlog::set_default_logger(logger);
  } catch (const spdlog::spdlog_ex& e) {
    std::fprintf(stderr, "can't open logfile '%s': %s\n", logfile.c_str(), e.what());
    return false;
  }
  spdlog::set_pattern("%P:M %d %b %Y %H:%M:%S.%e %^%L%$ %v");
  spdlog::flush_on(spdlog::level::info);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0)) {
    PrintUsage();
    return 0;
  }
  if (argc == 2 && (std::strcmp(argv[1], "--version") == 0 || std::strcmp(argv[1], "-v") == 0)) {
    std::printf("rockcache-server v=%s (redis protocol %s)\n", rockcache::server::kRockcacheVersion,
                rockcache::server::kRedisCompatVersion);
    return 0;
  }
  // --import-rdb FILE (anywhere among the options): load an RDB file into the store and exit.
  std::string import_rdb;
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (i > 0 && std::strcmp(argv[i], "--import-rdb") == 0 && i + 1 < argc) {
      import_rdb = argv[++i];
      continue;
    }
    args.push_back(argv[i]);
  }
  rockcache::config::Config config;
  rockcache::Status status = config.LoadFromArgs(static_cast<int>(args.size()), args.data());
  if (!status.ok()) {
    std::fprintf(stderr, "*** FATAL CONFIG ERROR ***\n%s\n", status.message().c_str());
    return 1;
  }
  if (!SetUpLogging(config)) return 1;
  if (!import_rdb.empty()) return rockcache::server::RunRdbImport(config, import_rdb);

  // Signals: SIGPIPE ignored (writes report EPIPE); SIGINT/SIGTERM blocked in every thread and
  // read by Server::Run() through a signalfd.
  signal(SIGPIPE, SIG_IGN);
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  rockcache::server::Clock::Calibrate();
  rockcache::server::Server server(&config);
  spdlog::info("rockcache {} starting, pid={}", rockcache::server::kRockcacheVersion, getpid());
  std::string config_file = config.config_file();
  spdlog::info("config file: {}", config_file.empty() ? "none (embedded defaults)" : config_file);
  status = server.Start();
  if (!status.ok()) {
    spdlog::critical("failed to start: {}", status.ToString());
    return 1;
  }
  std::string pidfile = config.GetString("pidfile");
  if (!pidfile.empty()) std::ofstream(pidfile) << getpid() << "\n";
  spdlog::info(
      "ready to accept connections on {} port {}; net-threads={} pool-threads={} "
      "pool-mode={} dir={}",
      config.GetString("bind"), config.GetString("port"), server.loop_count(),
      config.GetString("pool-threads"), config.GetString("pool-mode"), config.GetString("dir"));
  server.Run();
  if (!pidfile.empty()) unlink(pidfile.c_str());
  return 0;
}
