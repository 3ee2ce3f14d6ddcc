#include "tests/support/differential_peer.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "tests/support/test_helpers.h"
#include "tests/support/test_server.h"

namespace rockcache::testing {
namespace {

int ConnectLoopback(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

}  // namespace

std::string ReferenceRedis::Binary() {
  for (const char* path : {"/usr/bin/redis-server", "/usr/local/bin/redis-server"}) {
    if (access(path, X_OK) == 0) return path;
  }
  return "";
}

ReferenceRedis::ReferenceRedis(const std::string& binary) {
  dir_ = MakeTempDir();
  port_ = FreePort();
  std::vector<std::string> argv = {
      binary,      "--save", "",   "--appendonly", "no", "--port", std::to_string(port_), "--bind",
      "127.0.0.1", "--dir",  dir_, "--daemonize",  "no"};
  pid_ = fork();
  REQUIRE(pid_ >= 0);
  if (pid_ == 0) {
    int log = open((dir_ + "/redis.log").c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    dup2(log, 1);
    dup2(log, 2);
    std::vector<char*> cargv;
    for (auto& a : argv) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    execv(cargv[0], cargv.data());
    _exit(127);
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline) {
    int fd = ConnectLoopback(port_);
    if (fd >= 0) {
      close(fd);
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  kill(pid_, SIGKILL);
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = -1;
  FAIL("redis-server did not accept connections within 20 s");
}

ReferenceRedis::~ReferenceRedis() {
  if (pid_ > 0) {
    kill(pid_, SIGTERM);
    int status = 0;
    for (int i = 0; i < 200; ++i) {
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
    }
  }
  RemoveTree(dir_);
}

RespPeer::RespPeer(int port, bool asserting) : asserting_(asserting) {
  fd_ = ConnectLoopback(port);
  Check(fd_ >= 0);
}

void RespPeer::Check(bool ok) {
  if (ok) return;
  if (asserting_) REQUIRE(ok);
  // Off the test's thread (Catch2's assertions are not thread-safe): a broken peer ends the
  // process loudly rather than going on with a wrong reply.
  std::fprintf(stderr, "RespPeer: connection failed or timed out\n");
  std::abort();
}

RespPeer::~RespPeer() {
  if (fd_ >= 0) close(fd_);
}

std::string RespPeer::Call(const std::vector<std::string>& args) {
  Send(Resp(args));
  return ReadReply();
}

void RespPeer::SendCommand(const std::vector<std::string>& args) { Send(Resp(args)); }

std::vector<std::string> RespPeer::CallPipelined(
    const std::vector<std::vector<std::string>>& commands) {
  std::string request;
  for (const auto& args : commands) request += Resp(args);
  Send(request);
  std::vector<std::string> replies;
  replies.reserve(commands.size());
  for (size_t i = 0; i < commands.size(); ++i) replies.push_back(ReadReply());
  return replies;
}

void RespPeer::Send(const std::string& request) {
  size_t sent = 0;
  while (sent < request.size()) {
    ssize_t n = send(fd_, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    Check(n > 0);
    sent += static_cast<size_t>(n);
  }
}

std::string RespPeer::ReadReply() {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s_);
  size_t end;
  while ((end = ReplyEnd(0)) == std::string::npos) {
    Check(std::chrono::steady_clock::now() < deadline);
    pollfd pfd{fd_, POLLIN, 0};
    if (poll(&pfd, 1, 100) <= 0) continue;
    char buf[65536];
    ssize_t n = recv(fd_, buf, sizeof(buf), 0);
    Check(n > 0);
    buffer_.append(buf, static_cast<size_t>(n));
  }
  std::string reply = buffer_.substr(0, end);
  buffer_.erase(0, end);
  return reply;
}

size_t RespPeer::ReplyEnd(size_t pos) const {
  constexpr size_t kIncomplete = std::string::npos;
  size_t eol = buffer_.find("\r\n", pos);
  if (pos >= buffer_.size() || eol == kIncomplete) return kIncomplete;
  char type = buffer_[pos];
  // One line: simple, error, integer; RESP3 null, double, boolean, big number.
  if (std::strchr("+-:_,#(", type) != nullptr) return eol + 2;
  long long n = std::stoll(buffer_.substr(pos + 1, eol - pos - 1));
  if (type == '$' || type == '=' || type == '!') {  // bulk; RESP3 verbatim, bulk error
    if (n < 0) return eol + 2;
    size_t end = eol + 2 + static_cast<size_t>(n) + 2;
    return end <= buffer_.size() ? end : kIncomplete;
  }
  if (type == '*' || type == '~' || type == '>' || type == '%' || type == '|') {
    size_t at = eol + 2;
    if (type == '%' || type == '|') n *= 2;  // a map's (an attribute's) keys and values
    for (long long i = 0; i < n; ++i) {
      at = ReplyEnd(at);
      if (at == kIncomplete) return kIncomplete;
    }
    // An attribute is followed by the reply it describes.
    return type == '|' && at != kIncomplete ? ReplyEnd(at) : at;
  }
  FAIL("unexpected RESP type byte: " << static_cast<int>(type));
  return kIncomplete;
}

}  // namespace rockcache::testing
