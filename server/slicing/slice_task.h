// The continuation of a sliced read (server/slicing/sliced_read.h): a pool task that runs one
// step, posts its chunk to the connection's loop and resubmits itself until the reply is whole.
//
// Threads: SubmitSliceStep from worker threads (a group that deferred a read, or the previous
// step); the task runs on a worker. Never waits: Submit from a worker does not wait for room.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "server/batch.h"
#include "server/client_registry.h"
#include "server/slicing/sliced_read.h"

namespace rockcache::server {

class Server;

// Everything a sliced command's remaining steps need.
struct SliceState {
  Server* server = nullptr;
  uint32_t loop_index = 0;
  uint64_t conn_id = 0;
  std::shared_ptr<ClientInfo> info;  // closed / pending and queued reply bytes
  std::unique_ptr<SlicedRead> read;
  PreparedCommand command;            // the sliced command, for its metrics (exec_start set)
  std::vector<PreparedCommand> rest;  // its batch's commands after it, not yet run
  BatchTimes times;                   // its batch's
  uint64_t steps = 1;                 // steps taken, the first (in the group) included
  int64_t submitted_ns = 0;           // steady clock when the next step was submitted
};

// THE place a continuation step goes to the pool: hint = connection id, so one connection's
// steps share a list; the step is the client's work for the MLFQ (pool/worker_pool.h): queued at
// the higher of the client's level and the level of the command's time so far, and its run is
// charged to the client. Worker threads (from the step before it); never waits.
void SubmitSliceStep(std::unique_ptr<SliceState> state);

}  // namespace rockcache::server
