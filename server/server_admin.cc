#include "server/server_admin.h"

#include <utility>

#include "server/metrics/info.h"
#include "server/net_loop.h"
#include "server/server.h"

namespace rockcache::server {

config::Config& ServerAdmin::config() { return server_->config(); }

std::string ServerAdmin::Info(const std::vector<std::string>& sections) {
  return BuildInfo(*server_, sections);
}

void ServerAdmin::ResetStats() { server_->ResetStats(); }

void ServerAdmin::RequestShutdown() { server_->RequestShutdown(); }

Checkpoints& ServerAdmin::checkpoints() { return server_->checkpoints(); }

uint64_t ServerAdmin::WritesProcessed() { return server::WritesProcessed(*server_); }

Metrics& ServerAdmin::metrics() { return server_->metrics(); }

SlowLog& ServerAdmin::slowlog() { return server_->slowlog(); }

cache::Cache* ServerAdmin::cache() { return server_->cache(); }

void ServerAdmin::PostCompletion(uint32_t loop_index, Completion completion) {
  server_->loop(loop_index)->PostCompletion(std::move(completion));
}

}  // namespace rockcache::server
