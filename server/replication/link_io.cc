#include "server/replication/link_io.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

namespace rockcache::server::replication {
namespace {

int64_t SteadyMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

constexpr int kStopCheckMs = 100;

}  // namespace

int ConnectTcp(const std::string& host, int port, int timeout_ms) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &res) != 0) return -1;
  int fd = -1;
  for (addrinfo* ai = res; ai != nullptr && fd < 0; ai = ai->ai_next) {
    fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) continue;
    int rc = connect(fd, ai->ai_addr, ai->ai_addrlen);
    if (rc != 0 && errno == EINPROGRESS) {
      pollfd p{fd, POLLOUT, 0};
      int err = 0;
      socklen_t len = sizeof(err);
      if (poll(&p, 1, timeout_ms) == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 &&
          err == 0) {
        rc = 0;
      }
    }
    if (rc != 0) {
      close(fd);
      fd = -1;
    }
  }
  freeaddrinfo(res);
  if (fd >= 0) {
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  }
  return fd;
}

LinkIo::LinkIo(int fd) : fd_(fd) {
  int flags = fcntl(fd, F_GETFL);
  if (flags >= 0 && !(flags & O_NONBLOCK)) fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

void LinkIo::Shutdown() {
  int fd = fd_.load();
  if (fd >= 0) shutdown(fd, SHUT_RDWR);
}

void LinkIo::Close() {
  int fd = fd_.exchange(-1);
  if (fd >= 0) close(fd);
}

bool LinkIo::WriteAll(std::string_view data, const Stop& stop, int64_t stall_ms) {
  int64_t last_progress = SteadyMs();
  while (!data.empty()) {
    const int fd = fd_.load();
    if (fd < 0 || bad_) return false;
    ssize_t n = send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n > 0) {
      data.remove_prefix(static_cast<size_t>(n));
      last_progress = SteadyMs();
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno != EAGAIN) {
      bad_ = true;
      return false;
    }
    if (stop() || (stall_ms > 0 && SteadyMs() - last_progress > stall_ms)) return false;
    pollfd p{fd, POLLOUT, 0};
    poll(&p, 1, kStopCheckMs);
  }
  return true;
}

void LinkIo::Compact() {
  if (pos_ > 0 && (pos_ == in_.size() || pos_ > (1u << 20))) {
    in_.erase(0, pos_);
    pos_ = 0;
  }
}

int LinkIo::Fill(int timeout_ms) {
  const int fd = fd_.load();
  if (fd < 0 || bad_) return -1;
  Compact();
  pollfd p{fd, POLLIN, 0};
  int rc = poll(&p, 1, timeout_ms);
  if (rc < 0) return errno == EINTR ? 0 : -1;
  if (rc == 0) return 0;
  char buf[64 * 1024];
  ssize_t n = recv(fd, buf, sizeof(buf), 0);
  if (n > 0) {
    in_.append(buf, static_cast<size_t>(n));
    return 1;
  }
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) return 0;
  bad_ = true;
  return -1;
}

bool LinkIo::ReadLine(std::string* line, int timeout_ms, const Stop& stop) {
  const int64_t deadline = SteadyMs() + timeout_ms;
  while (true) {
    size_t eol = in_.find("\r\n", pos_);
    if (eol != std::string::npos) {
      line->assign(in_, pos_, eol - pos_);
      pos_ = eol + 2;
      return true;
    }
    if (in_.size() - pos_ > (1u << 20)) return false;  // no line is that long
    if (stop() || SteadyMs() > deadline) return false;
    if (Fill(kStopCheckMs) < 0) return false;
  }
}

bool LinkIo::ReadExact(char* out, size_t n, int timeout_ms, const Stop& stop) {
  int64_t deadline = SteadyMs() + timeout_ms;
  while (n > 0) {
    const size_t have = in_.size() - pos_;
    if (have > 0) {
      const size_t take = have < n ? have : n;
      std::memcpy(out, in_.data() + pos_, take);
      pos_ += take;
      out += take;
      n -= take;
      deadline = SteadyMs() + timeout_ms;  // the timeout is per stall, not for the whole read
      continue;
    }
    if (stop() || SteadyMs() > deadline) return false;
    if (Fill(kStopCheckMs) < 0) return false;
  }
  return true;
}

bool LinkIo::TakeResp(std::vector<std::string>* args) {
  if (pos_ >= in_.size()) return false;
  size_t consumed = 0;
  RespParser::Result r = parser_.Parse(in_.data() + pos_, in_.size() - pos_, &consumed, args);
  pos_ += consumed;
  if (r == RespParser::Result::kError) {
    bad_ = true;
    return false;
  }
  return r != RespParser::Result::kNeedMore;
}

void LinkIo::WaitClosed(const Stop& stop, int64_t timeout_ms) {
  const int64_t deadline = SteadyMs() + timeout_ms;
  while (!stop() && SteadyMs() < deadline) {
    if (Fill(kStopCheckMs) < 0) return;
    pos_ = in_.size();  // whatever it sends meanwhile (acknowledgements) is not needed
  }
}

}  // namespace rockcache::server::replication
