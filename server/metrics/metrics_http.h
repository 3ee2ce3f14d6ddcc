// MetricsHttpServer: the Prometheus endpoint. One thread runs a libevent evhttp server on
// `metrics-port` at the bind addresses; GET /metrics answers the text exposition format
// (counters, gauges, and the stage histograms as Prometheus histograms labelled by command and
// stage). Everything else answers 404.
//
// Threads: Start/Stop from the main thread. The HTTP thread only reads merged snapshots
// (Metrics::Read, pool and cache stats), so it never slows the network loops or the workers.
#pragma once

#include <string>
#include <thread>
#include <vector>

#include "config/status.h"

struct event;
struct event_base;
struct evhttp;

namespace rockcache::server {

class Server;

class MetricsHttpServer {
 public:
  explicit MetricsHttpServer(Server* server) : server_(server) {}
  ~MetricsHttpServer();
  MetricsHttpServer(const MetricsHttpServer&) = delete;
  MetricsHttpServer& operator=(const MetricsHttpServer&) = delete;

  // Binds every address on `port` and starts the thread. An error leaves nothing running.
  [[nodiscard]] Status Start(const std::vector<std::string>& addresses, int port);
  // Stops the thread. Idempotent.
  void Stop();

 private:
  Server* const server_;
  event_base* base_ = nullptr;
  evhttp* http_ = nullptr;
  int stop_fd_ = -1;  // eventfd: Stop() writes it, the HTTP thread breaks its loop
  event* stop_event_ = nullptr;
  std::thread thread_;
};

// The /metrics body, in Prometheus text format 0.0.4. Any thread.
std::string RenderPrometheus(Server& server);

}  // namespace rockcache::server
