// libFuzzer target for the dispatcher (`make fuzz`): random command sequences against a whole
// rockcache server running in this process (its loops, worker pool, cache and RocksDB on a
// temporary directory), built with ASan+UBSan.
//
// Each input is decoded (FuzzedDataProvider) into commands: a name from the command table
// (sometimes case-mangled, sometimes an unknown one), an arity around the command's own, and
// arguments that are either random bytes, one of a few shared key names (so types collide) or
// a number-like token (so counts, ranges and scores reach their edge cases). The commands go as
// one pipelined RESP write over a loopback connection, followed by RESET and an ECHO of a
// sentinel (blocking pops get a 10 ms timeout); the target reads until the sentinel comes back (or
// the server closed the connection, e.g. after QUIT or CLIENT KILL). A crash, a sanitizer report, a
// leak or a server that stops answering (60 s without a byte) is a finding; then every thread's
// stack, the server's sockets (ss), its CLIENT LIST and INFO, and the last 4096 requests
// (dispatcher-stall-history.txt) are written out, since the cause is usually an earlier input.
// The socket calls retry on EINTR: libFuzzer's -timeout watchdog is a SIGALRM, which once made a
// poll() interrupted after a few seconds look like a 60 s stall.
//
// Left out: SHUTDOWN and DEBUG (they end or stall the process by design), and CONFIG SET (it
// could set requirepass and lock every later input out); CONFIG GET and RESETSTAT stay.
#include <arpa/inet.h>
#include <fuzzer/FuzzedDataProvider.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "config/config.h"
#include "server/blocking/timeout.h"
#include "server/commands/command.h"
#include "server/server.h"

namespace {

using rockcache::server::AllCommands;

struct Harness {
  rockcache::config::Config config;
  std::unique_ptr<rockcache::server::Server> server;
  int port = 0;
};

int PickFreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), len) != 0) std::abort();
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

Harness* StartServer() {
  spdlog::set_level(spdlog::level::off);
  auto* h = new Harness;  // lives for the whole process (reachable: not a leak)
  char dir[] = "/tmp/rockcache-fuzz-XXXXXX";
  if (mkdtemp(dir) == nullptr) std::abort();
  h->port = PickFreePort();
  const std::vector<std::pair<std::string, std::string>> options = {
      {"port", std::to_string(h->port)},
      {"bind", "127.0.0.1"},
      {"dir", dir},
      {"metrics-port", "0"},
      {"net-threads", "1"},
      {"pool-threads", "2"},
      {"cache-maxmemory", "8mb"},
      {"rocksdb-block-cache-size", "8mb"},
      {"proto-max-bulk-len", "1mb"},
  };
  for (const auto& [name, value] : options) {
    if (!h->config.Set(name, value).ok()) std::abort();
  }
  h->server = std::make_unique<rockcache::server::Server>(&h->config);
  if (!h->server->Start().ok()) std::abort();
  return h;
}

int Connect(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  // An interrupted connect (libFuzzer's SIGALRM) goes on in the background: wait, ask again.
  while (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    if (errno == EISCONN) break;
    if (errno != EINTR && errno != EALREADY) std::abort();
    pollfd p{fd, POLLOUT, 0};
    poll(&p, 1, 1000);
  }
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  return fd;
}

void AppendResp(const std::vector<std::string>& args, std::string* out) {
  *out += "*" + std::to_string(args.size()) + "\r\n";
  for (const auto& a : args) {
    *out += "$" + std::to_string(a.size()) + "\r\n";
    *out += a;
    *out += "\r\n";
  }
}

std::string Argument(FuzzedDataProvider& in) {
  static const char* const kKeys[] = {"k", "k1", "k2", "{k}x", ""};
  static const char* const kNumbers[] = {"0",
                                         "1",
                                         "-1",
                                         "2",
                                         "-2",
                                         "10",
                                         "100000000",
                                         "-100000000",
                                         "9223372036854775807",
                                         "-9223372036854775808",
                                         "1.5",
                                         "inf",
                                         "-inf",
                                         "nan",
                                         "(1",
                                         "[a",
                                         "-",
                                         "+",
                                         "*",
                                         "COUNT",
                                         "MATCH",
                                         "WITHSCORES",
                                         "LIMIT",
                                         "EX",
                                         "PX",
                                         "NX",
                                         "XX",
                                         "GT",
                                         "LT",
                                         "BYSCORE",
                                         "BYLEX",
                                         "REV",
                                         "LEFT",
                                         "RIGHT",
                                         "BEFORE",
                                         "AFTER",
                                         "KEEPTTL",
                                         "GET",
                                         "RANK",
                                         "MAXLEN",
                                         "TYPE",
                                         "string",
                                         "hash"};
  switch (in.ConsumeIntegralInRange<int>(0, 3)) {
    case 0:
      return kKeys[in.ConsumeIntegralInRange<size_t>(0, sizeof(kKeys) / sizeof(kKeys[0]) - 1)];
    case 1:
      return kNumbers[in.ConsumeIntegralInRange<size_t>(
          0, sizeof(kNumbers) / sizeof(kNumbers[0]) - 1)];
    default:
      return in.ConsumeRandomLengthString(48);
  }
}

bool Excluded(const std::string& name, const std::vector<std::string>& args) {
  if (name == "shutdown" || name == "debug") return true;
  if (name == "config" && args.size() > 1) {
    std::string sub = args[1];
    for (auto& c : sub) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return sub == "set";
  }
  return false;
}

// The last requests sent, oldest first: a stall's cause is usually in an earlier input.
constexpr size_t kHistory = 4096;
std::deque<std::string>& History() {
  static auto* history = new std::deque<std::string>;  // process lifetime
  return *history;
}

int Connect(int port);

// On a stall: whether the server still answers a new connection, and what it says about itself.
void DumpServerView(int port) {
  // The sockets of the server's port as the kernel sees them (a handshake stuck in SYN-RECV
  // looks like a stalled server from here).
  const std::string ss = "ss -tanoi '( sport = :" + std::to_string(port) +
                         " or dport = :" + std::to_string(port) + " )' 1>&2";
  if (std::system(ss.c_str()) != 0) std::fprintf(stderr, "(ss failed)\n");
  int fd = Connect(port);
  const std::string request =
      "*2\r\n$6\r\nCLIENT\r\n$4\r\nLIST\r\n*3\r\n$4\r\nINFO\r\n$7\r\nclients\r\n$5\r\nstats\r\n";
  if (send(fd, request.data(), request.size(), MSG_NOSIGNAL) < 0) return;
  std::string reply;
  char buf[65536];
  pollfd p{fd, POLLIN, 0};
  while (poll(&p, 1, 5000) > 0) {
    ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) break;
    reply.append(buf, static_cast<size_t>(n));
    if (reply.find("# Stats") != std::string::npos &&
        reply.find("parked_batches") != std::string::npos) {
      break;
    }
  }
  std::fprintf(stderr, "CLIENT LIST and INFO from a new connection (%zu bytes):\n%s\n",
               reply.size(), reply.c_str());
  close(fd);
}

// A stall is a finding only if it can be read: every thread's stack (gdb, when installed) goes to
// stderr, and the last requests to dispatcher-stall-history.txt, before the abort.
void DumpThreads() {
  if (FILE* f = std::fopen("dispatcher-stall-history.txt", "w")) {
    for (const auto& request : History()) {  // binary-safe: "---- request <bytes>\n" + bytes
      std::fprintf(f, "---- request %zu\n", request.size());
      std::fwrite(request.data(), 1, request.size(), f);
      std::fputc('\n', f);
    }
    std::fclose(f);
  }
  prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
  const std::string command = "gdb -p " + std::to_string(getpid()) +
                              " -batch -nx -ex 'thread apply all bt' 1>&2 2>/dev/null";
  if (std::system(command.c_str()) != 0) std::fprintf(stderr, "(no gdb: no thread dump)\n");
}

// Reads until `sentinel` arrives or the server closes; aborts after 60 s with no byte from it.
void AwaitSentinel(int fd, const std::string& sentinel, int port) {
  // libFuzzer's -timeout watchdog is a SIGALRM: poll and recv may return EINTR at any time. The
  // 60 s count only time without a single byte from the server, on the steady clock.
  using Clock = std::chrono::steady_clock;
  std::string tail;
  char buf[65536];
  auto deadline = Clock::now() + std::chrono::seconds(60);
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    pollfd p{fd, POLLIN, 0};
    const int ready = left > 0 ? poll(&p, 1, static_cast<int>(left)) : 0;
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) {
      std::fprintf(stderr, "dispatcher fuzz: no answer within 60 s: the server stalled\n");
      DumpServerView(port);
      DumpThreads();
      std::abort();
    }
    ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // closed by the server (QUIT, CLIENT KILL, protocol limits)
    deadline = Clock::now() + std::chrono::seconds(60);
    tail.append(buf, static_cast<size_t>(n));
    if (tail.find(sentinel) != std::string::npos) return;
    if (tail.size() > sentinel.size() * 2) tail.erase(0, tail.size() - sentinel.size() * 2);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Harness* harness = StartServer();
  static uint64_t round = 0;
  const auto& commands = AllCommands();
  FuzzedDataProvider in(data, size);
  std::string request;
  int count = 0;
  while (in.remaining_bytes() > 0 && count < 64) {
    std::vector<std::string> args;
    const auto* spec = commands[in.ConsumeIntegralInRange<size_t>(0, commands.size() - 1)];
    std::string name = spec->name;
    const int mangle = in.ConsumeIntegralInRange<int>(0, 15);
    if (mangle == 0) name[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(name[0])));
    if (mangle == 1) name += "x";  // unknown command
    args.push_back(name);
    const int arity = spec->arity;
    int want = arity >= 0 ? arity : -arity + in.ConsumeIntegralInRange<int>(0, 5);
    if (in.ConsumeIntegralInRange<int>(0, 7) == 0) want += in.ConsumeIntegralInRange<int>(-2, 2);
    for (int i = 1; i < want; ++i) args.push_back(Argument(in));
    if (Excluded(spec->name, args)) continue;
    // A blocking pop with timeout 0 would wait forever for a push that never comes: 10 ms.
    if ((spec->flags & rockcache::server::kMayBlock) && args.size() > 1) {
      args[rockcache::server::BlockTimeoutIndex(args[0], args.size())] = "0.01";
    }
    AppendResp(args, &request);
    ++count;
  }
  // DISPATCHER_FUZZ_PRINT=1 shows the decoded request (to read a finding).
  static const bool print = std::getenv("DISPATCHER_FUZZ_PRINT") != nullptr;
  if (print) std::fprintf(stderr, "request:\n%s\n", request.c_str());
  const std::string sentinel = "fuzz-sentinel-" + std::to_string(++round);
  // RESET leaves subscribed mode (where ECHO would be refused) and MULTI (where it would be
  // queued), whatever the fuzzed commands left the connection in.
  AppendResp({"RESET"}, &request);
  AppendResp({"ECHO", sentinel}, &request);

  if (History().size() == kHistory) History().erase(History().begin());
  History().push_back(request);

  int fd = Connect(harness->port);
  size_t sent = 0;
  while (sent < request.size()) {
    ssize_t n = send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;  // libFuzzer's SIGALRM
    if (n <= 0) break;                      // closed early (QUIT in the middle)
    sent += static_cast<size_t>(n);
  }
  AwaitSentinel(fd, sentinel, harness->port);
  close(fd);
  return 0;
}
