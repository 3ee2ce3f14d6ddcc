// SLOWLOG and LATENCY: the slow log with rockcache's stage breakdown, the latency monitor
// (LATEST / HISTORY / GRAPH / RESET / DOCTOR, fed by server/metrics when a command reaches
// latency-monitor-threshold ms) and LATENCY HISTOGRAM over the per-command stage histograms.
#include "server/commands/args.h"
#include "server/commands/command.h"
#include "server/commands/subcommand.h"
#include "server/metrics/metrics.h"
#include "server/metrics/slowlog.h"
#include "server/protocol/reply.h"
#include "server/server_admin.h"

namespace rockcache::server {
namespace {

void SlowlogCommand(CommandContext& ctx, Args& argv, std::string* out) {
  SlowLog& slowlog = ctx.admin().slowlog();
  if (Is(argv[1], "GET") && argv.size() <= 3) {
    int64_t count = 10;
    if (argv.size() == 3 && (!ParseInteger(argv[2], &count) || count < -1)) {
      return AppendError(out, "ERR count should be greater than or equal to -1");
    }
    auto entries = slowlog.Get(count);
    AppendArrayHeader(out, static_cast<int64_t>(entries.size()));
    for (const auto& e : entries) {
      // Redis's six fields, then ours: the stage breakdown in microseconds, and the pool's view
      // (MLFQ level, slices, their total queue wait in microseconds).
      AppendArrayHeader(out, 8);
      AppendInteger(out, static_cast<int64_t>(e.id));
      AppendInteger(out, e.unix_time);
      AppendInteger(out, static_cast<int64_t>(e.duration_us));
      AppendArrayHeader(out, static_cast<int64_t>(e.args.size()));
      for (const auto& arg : e.args) AppendBulk(out, arg);
      AppendBulk(out, e.client_addr);
      AppendBulk(out, e.client_name);
      std::vector<int> stages;
      if (e.in_loop) {
        stages = {kExecute, kTotal};
      } else {
        stages = {kBeforeQueue, kQueueWait, kExecute, kHandBack, kTotal};
      }
      AppendMapHeader(out, static_cast<int64_t>(stages.size()));
      for (int stage : stages) {
        AppendBulk(out, StageName(stage));
        AppendInteger(out, static_cast<int64_t>(e.stage_us[stage]));
      }
      AppendMapHeader(out, 3);
      AppendBulk(out, "level");
      AppendInteger(out, e.level);
      AppendBulk(out, "slices");
      AppendInteger(out, static_cast<int64_t>(e.slices));
      AppendBulk(out, "slices_queue_wait");
      AppendInteger(out, static_cast<int64_t>(e.slices_queue_wait_us));
    }
    return;
  }
  if (Is(argv[1], "LEN") && argv.size() == 2) {
    return AppendInteger(out, static_cast<int64_t>(slowlog.size()));
  }
  if (Is(argv[1], "RESET") && argv.size() == 2) {
    slowlog.Reset();
    return out->append(kReplyOk), void();
  }
  if (Is(argv[1], "HELP") && argv.size() == 2) {
    return AppendHelp(
        out,
        {"SLOWLOG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:", "GET [<count>]",
         "    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
         "    Entries are made of:",
         "    id, timestamp, time in microseconds, arguments array, client IP and port,",
         "    client name, stage breakdown (before_queue, queue_wait, execute, hand_back, total),",
         "    pool view (level, slices, slices_queue_wait)", "LEN",
         "    Return the length of the slowlog.", "RESET", "    Reset the slowlog.", "HELP",
         "    Print this help."});
  }
  AppendSubcommandError(out, argv, {"GET", "LEN", "RESET", "HELP"});
}

// LATENCY HISTOGRAM in Redis 7's reply shape: per command, its calls and a cumulative
// histogram of total latency over power-of-two microsecond buckets.
void LatencyHistogramReply(CommandContext& ctx, Args& argv, std::string* out) {
  Metrics::Snapshot snapshot = ctx.admin().metrics().Read();
  const auto& all = AllCommands();
  std::vector<size_t> ids;
  for (size_t i = 0; i < all.size(); ++i) {
    bool wanted = argv.size() == 2;
    for (size_t a = 2; a < argv.size() && !wanted; ++a) wanted = Is(argv[a], all[i]->name);
    if (wanted && snapshot.per_command[i].stages[kTotal].Count() > 0) ids.push_back(i);
  }
  AppendMapHeader(out, static_cast<int64_t>(ids.size()));
  for (size_t id : ids) {
    const LatencyHistogram::Data& data = snapshot.per_command[id].stages[kTotal];
    AppendBulk(out, all[id]->name);
    AppendMapHeader(out, 2);
    AppendBulk(out, "calls");
    AppendInteger(out, static_cast<int64_t>(data.Count()));
    AppendBulk(out, "histogram_usec");
    // Cumulative counts at each power-of-two microsecond bound that has samples up to it.
    std::vector<std::pair<uint64_t, uint64_t>> points;
    uint64_t cumulative = 0;
    uint64_t bound_us = 1;
    int bucket = 0;
    uint64_t total = data.Count();
    while (cumulative < total && bound_us <= (1ull << 40)) {
      uint64_t bound_ns = bound_us * 1000;
      uint64_t before = cumulative;
      while (bucket < LatencyHistogram::kBuckets &&
             LatencyHistogram::BucketLow(bucket) < bound_ns) {
        cumulative += data.buckets[static_cast<size_t>(bucket)];
        ++bucket;
      }
      if (cumulative > before) points.emplace_back(bound_us, cumulative);
      bound_us *= 2;
    }
    AppendMapHeader(out, static_cast<int64_t>(points.size()));
    for (const auto& [bound, count] : points) {
      AppendInteger(out, static_cast<int64_t>(bound));
      AppendInteger(out, static_cast<int64_t>(count));
    }
  }
}

// LATENCY GRAPH <event>: the event's samples as rows of '#' scaled to its maximum.
void LatencyGraph(const LatencyMonitor::Event& event, const std::string& name, std::string* out) {
  std::string text = name + " - high " + std::to_string(event.max_ms) + " ms\n";
  for (const auto& s : event.samples) {
    size_t width = event.max_ms == 0 ? 0 : static_cast<size_t>(s.latency_ms * 60 / event.max_ms);
    text += std::to_string(s.unix_time) + " " + std::string(width, '#') + " " +
            std::to_string(s.latency_ms) + " ms\n";
  }
  AppendVerbatim(out, text);
}

void Latency(CommandContext& ctx, Args& argv, std::string* out) {
  LatencyMonitor& monitor = ctx.admin().metrics().latency_monitor();
  const std::string& sub = argv[1];
  if (Is(sub, "HISTOGRAM")) return LatencyHistogramReply(ctx, argv, out);
  if (Is(sub, "LATEST") && argv.size() == 2) {
    auto events = monitor.Events();
    AppendArrayHeader(out, static_cast<int64_t>(events.size()));
    for (const auto& [name, event] : events) {
      AppendArrayHeader(out, 4);
      AppendBulk(out, name);
      AppendInteger(out, event.samples.empty() ? 0 : event.samples.back().unix_time);
      AppendInteger(out, event.samples.empty() ? 0 : int64_t(event.samples.back().latency_ms));
      AppendInteger(out, static_cast<int64_t>(event.max_ms));
    }
    return;
  }
  if ((Is(sub, "HISTORY") || Is(sub, "GRAPH")) && argv.size() == 3) {
    auto events = monitor.Events();
    auto it = events.find(argv[2]);
    if (Is(sub, "GRAPH")) {
      if (it == events.end()) {
        return AppendError(out, "ERR No samples available for event '" + argv[2] + "'");
      }
      return LatencyGraph(it->second, it->first, out);
    }
    if (it == events.end()) return AppendArrayHeader(out, 0);
    AppendArrayHeader(out, static_cast<int64_t>(it->second.samples.size()));
    for (const auto& s : it->second.samples) {
      AppendArrayHeader(out, 2);
      AppendInteger(out, s.unix_time);
      AppendInteger(out, static_cast<int64_t>(s.latency_ms));
    }
    return;
  }
  if (Is(sub, "RESET")) {
    std::vector<std::string> events(argv.begin() + 2, argv.end());
    return AppendInteger(out, monitor.Reset(events));
  }
  if (Is(sub, "DOCTOR") && argv.size() == 2) return AppendVerbatim(out, monitor.Doctor());
  if (Is(sub, "HELP") && argv.size() == 2) {
    const char* histogram_help =
        "    Return a cumulative distribution of latencies in the format of a histogram for "
        "the specified command names.";
    return AppendHelp(
        out, {"LATENCY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:", "DOCTOR",
              "    Return a human readable latency analysis report.", "GRAPH <event>",
              "    Return an ASCII latency graph for the <event> class.", "HISTORY <event>",
              "    Return time-latency samples for the <event> class.", "LATEST",
              "    Return the latest latency samples for all events.", "RESET [<event> ...]",
              "    Reset latency data of one or more <event> classes.",
              "    (default: reset all data for all event classes)", "HISTOGRAM [COMMAND ...]",
              histogram_help, "    If no commands are specified then all histograms are replied.",
              "HELP", "    Prints this help."});
  }
  AppendSubcommandError(out, argv,
                        {"DOCTOR", "GRAPH", "HISTORY", "LATEST", "RESET", "HISTOGRAM", "HELP"});
}

}  // namespace

// clang-format off
const std::vector<CommandSpec> kObservabilityCommands = {
    {"slowlog", -2, kAnywhere | kAdmin, 0, 0, 0, SlowlogCommand, nullptr,
     "get|len|reset|help"},
    {"latency", -2, kAnywhere | kAdmin, 0, 0, 0, Latency, nullptr,
     "doctor|graph|histogram|history|latest|reset|help"},
};
// clang-format on

}  // namespace rockcache::server
