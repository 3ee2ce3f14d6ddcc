// heavy-client: a load generator for scripts/mlfq-bench.sh. It sends one command over and over on
// one connection (a "heavy" client: KEYS *, HGETALL, LRANGE 0 -1, ...) and checks each reply's
// shape without keeping or printing it: an array header, then every element's bulk header and
// exactly its declared bytes. That costs a fraction of what redis-cli spends formatting a
// million-line reply, so on a 2-core machine the load generators take less of the CPU the
// servers under test are measured on (the same client drives rockcache and redis-server).
//
// Usage: heavy-client PORT EXPECT ARG...   (EXPECT: elements a complete reply has; 0 = any)
// Runs until SIGTERM or SIGINT; then it sends nothing more, reads the reply in flight to its
// end, prints "<complete> <finished after the signal> <bad>" and exits 0. A reply is complete
// when its array holds EXPECT elements (or any count if EXPECT is 0) and every element arrived
// whole; an error reply, a wrong count or a reply cut by a broken connection is bad. Exits 1
// if the connection fails.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

volatile sig_atomic_t stop_requested = 0;
void OnSignal(int) { stop_requested = 1; }

// A RESP2 multi-bulk request for args.
std::string Request(int argc, char** argv) {
  std::string req = "*" + std::to_string(argc) + "\r\n";
  for (int i = 0; i < argc; ++i) {
    const size_t n = std::strlen(argv[i]);
    req += "$" + std::to_string(n) + "\r\n";
    req.append(argv[i], n);
    req += "\r\n";
  }
  return req;
}

// Reads one reply's shape from the socket. Returns 1 for a complete reply of `expect` elements
// (any count when expect is 0), 0 for a bad one (error, wrong count, element not a bulk string),
// -1 when the connection broke.
class ReplyReader {
 public:
  explicit ReplyReader(int fd) : fd_(fd), buf_(1 << 20) {}

  int Read(long long expect) {
    std::string line;
    if (!Line(&line)) return -1;
    if (line.empty() || line[0] != '*') return 0;
    const long long count = std::atoll(line.c_str() + 1);
    bool ok = expect == 0 || count == expect;
    for (long long i = 0; i < count; ++i) {
      if (!Line(&line)) return -1;
      if (line.empty() || line[0] != '$') {
        ok = false;
        continue;
      }
      const long long len = std::atoll(line.c_str() + 1);
      if (len >= 0 && !Skip(static_cast<size_t>(len) + 2)) return -1;
    }
    return ok ? 1 : 0;
  }

 private:
  bool Fill() {
    if (begin_ > 0) {
      std::memmove(buf_.data(), buf_.data() + begin_, end_ - begin_);
      end_ -= begin_;
      begin_ = 0;
    }
    if (end_ == buf_.size()) buf_.resize(buf_.size() * 2);
    for (;;) {
      const ssize_t n = recv(fd_, buf_.data() + end_, buf_.size() - end_, 0);
      if (n > 0) {
        end_ += static_cast<size_t>(n);
        return true;
      }
      if (n < 0 && errno == EINTR) continue;  // a stop lets the reply in flight finish
      return false;
    }
  }
  bool Line(std::string* out) {
    for (;;) {
      const char* start = buf_.data() + begin_;
      const void* nl = std::memchr(start, '\n', end_ - begin_);
      if (nl != nullptr) {
        const size_t len = static_cast<const char*>(nl) - start;
        out->assign(start, len > 0 && start[len - 1] == '\r' ? len - 1 : len);
        begin_ += len + 1;
        return true;
      }
      if (!Fill()) return false;
    }
  }
  bool Skip(size_t n) {
    for (;;) {
      const size_t have = end_ - begin_;
      if (have >= n) {
        begin_ += n;
        return true;
      }
      n -= have;
      begin_ = end_ = 0;
      if (!Fill()) return false;
    }
  }

  int fd_;
  std::vector<char> buf_;
  size_t begin_ = 0;
  size_t end_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: heavy-client PORT EXPECT ARG...\n");
    return 2;
  }
  struct sigaction sa {};
  sa.sa_handler = OnSignal;  // no SA_RESTART: a blocked recv returns EINTR
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);

  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(std::atoi(argv[1])));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    std::perror("heavy-client: connect");
    return 1;
  }
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  const long long expect = std::atoll(argv[2]);
  const std::string request = Request(argc - 3, argv + 3);

  long long complete = 0;
  long long after_stop = 0;  // the reply in flight when the stop came, finished whole
  long long bad = 0;
  ReplyReader reader(fd);
  while (!stop_requested) {
    size_t sent = 0;
    while (sent < request.size()) {
      const ssize_t n = send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR && !stop_requested) continue;
      if (n <= 0) break;
      sent += static_cast<size_t>(n);
    }
    if (sent < request.size()) break;
    const int r = reader.Read(expect);
    if (r < 0) {  // the connection broke with a reply in flight
      ++bad;
      break;
    }
    (r == 0 ? bad : stop_requested ? after_stop : complete) += 1;
  }
  close(fd);
  std::printf("%lld %lld %lld\n", complete, after_stop, bad);
  return stop_requested ? 0 : 1;
}
