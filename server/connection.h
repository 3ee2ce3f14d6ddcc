// Connection: one client socket and its buffers. Owned by exactly one NetLoop and touched only
// on that loop's thread (other threads know it by id through ClientRegistry).
//
// Life of a request: bytes are read into `input`, the RespParser turns them into commands, the
// NetLoop runs what it can right there and hands a batch of storage commands to the worker
// pool; while that batch is `in_flight` the connection parses nothing more, so replies keep
// request order and a client always reads its own writes.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "server/client_registry.h"
#include "server/resp_parser.h"

struct event;

namespace rockcache::server {

class NetLoop;

struct Connection {
  Connection(uint64_t id, int fd, NetLoop* loop, std::shared_ptr<ClientInfo> info)
      : id(id), fd(fd), loop(loop), info(std::move(info)) {}
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  const uint64_t id;
  const int fd;
  NetLoop* const loop;
  const std::shared_ptr<ClientInfo> info;

  RespParser parser;
  std::string input;  // received bytes; [input_pos, size) not yet parsed
  size_t input_pos = 0;
  std::string output;  // reply bytes; [output_pos, size) not yet written
  size_t output_pos = 0;

  bool in_flight = false;  // a batch is with the worker pool
  bool authenticated = false;
  bool close_after_reply = false;  // QUIT, protocol error, CLIENT KILL of itself
  bool reading_paused = false;     // input backlog too large while in flight
  bool write_pending = false;      // EV_WRITE armed
  int64_t last_interaction_ms = 0;

  event* read_event = nullptr;   // owned; freed by NetLoop::CloseConnection
  event* write_event = nullptr;  // owned
};

}  // namespace rockcache::server
