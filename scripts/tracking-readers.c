// N RESP3 connections with CLIENT TRACKING ON (or OFF: 5th argument "notrack"), each reading
// random keys ("key:%012d" in [0, range), redis-benchmark -r's keys) with one GET in flight, until
// `seconds` pass or SIGTERM; prints GETs/s and invalidation pushes/s (issue 44's measure).
// Build: gcc -O2 -o /tmp/tracking-readers scripts/tracking-readers.c
// Usage: tracking-readers PORT N RANGE SECONDS [notrack]
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <signal.h>
static volatile sig_atomic_t stop_flag = 0;
static void on_term(int s) { (void)s; stop_flag = 1; }

typedef struct { int fd; char *buf; size_t len, cap; int stage; } Conn;

// End of the frame starting at p (exclusive), or NULL if incomplete.
static const char *frame_end(const char *p, const char *end) {
  const char *eol = memchr(p, '\r', end - p);
  if (!eol || eol + 1 >= end) return NULL;
  const char *next = eol + 2;
  long n;
  switch (*p) {
    case '+': case '-': case ':': case '_': case ',': case '#': case '(': return next;
    case '$': case '=': case '!':
      n = atol(p + 1);
      if (n < 0) return next;
      return (end - next >= n + 2) ? next + n + 2 : NULL;
    case '*': case '~': case '>': case '%': case '|':
      n = atol(p + 1);
      if (n < 0) return next;
      if (*p == '%' || *p == '|') n *= 2;
      for (long i = 0; i < n; i++) { next = frame_end(next, end); if (!next) return NULL; }
      return next;
  }
  fprintf(stderr, "bad frame %c\n", *p); exit(1);
}

static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec / 1e9; }

static void sendstr(int fd, const char *s) { size_t l = strlen(s); while (l) { ssize_t w = write(fd, s, l); if (w < 0) { if (errno == EAGAIN) continue; perror("write"); exit(1);} s += w; l -= w; } }

static void send_get(Conn *c, long range) {
  char key[32], cmd[96];
  snprintf(key, sizeof key, "key:%012ld", random() % range);
  snprintf(cmd, sizeof cmd, "*2\r\n$3\r\nGET\r\n$%zu\r\n%s\r\n", strlen(key), key);
  sendstr(c->fd, cmd);
}

int main(int argc, char **argv) {
  if (argc < 5) { fprintf(stderr, "usage\n"); return 2; }
  int port = atoi(argv[1]), n = atoi(argv[2]); long range = atol(argv[3]); double secs = atof(argv[4]);
  int ep = epoll_create1(0);
  Conn *cs = calloc(n, sizeof(Conn));
  for (int i = 0; i < n; i++) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {0}; a.sin_family = AF_INET; a.sin_port = htons(port); a.sin_addr.s_addr = htonl(0x7f000001);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0) { perror("connect"); return 1; }
    int one = 1; setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    cs[i].fd = fd; cs[i].cap = 1 << 16; cs[i].buf = malloc(cs[i].cap);
    const char *track = (argc > 5 && strcmp(argv[5], "notrack") == 0) ? "OFF" : "ON";
    char hello[160];
    snprintf(hello, sizeof hello, "*2\r\n$5\r\nHELLO\r\n$1\r\n3\r\n*3\r\n$6\r\nCLIENT\r\n$8\r\nTRACKING\r\n$%zu\r\n%s\r\n", strlen(track), track);
    sendstr(fd, hello);
    cs[i].stage = 2;  // replies to skip before the GET loop
    struct epoll_event ev = {.events = EPOLLIN, .data.u32 = i};
    epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
  }
  long gets = 0, pushes = 0; double start = now(), end = start + secs;
  struct epoll_event evs[64];
  signal(SIGTERM, on_term);
  while (now() < end && !stop_flag) {
    int k = epoll_wait(ep, evs, 64, 100);
    if (k < 0) continue;
    for (int e = 0; e < k; e++) {
      Conn *c = &cs[evs[e].data.u32];
      if (c->cap - c->len < 4096) { c->cap *= 2; c->buf = realloc(c->buf, c->cap); }
      ssize_t r = read(c->fd, c->buf + c->len, c->cap - c->len);
      if (r <= 0) { fprintf(stderr, "conn closed\n"); return 1; }
      c->len += r;
      const char *p = c->buf, *stop = c->buf + c->len;
      for (;;) {
        const char *f = frame_end(p, stop);
        if (!f) break;
        if (*p == '>') { pushes++; }
        else if (c->stage > 0) { if (--c->stage == 0) send_get(c, range); }
        else { gets++; send_get(c, range); }
        p = f;
      }
      memmove(c->buf, p, stop - p); c->len = stop - p;
    }
  }
  double el = now() - start;
  printf("readers %d: GET %.0f/s, invalidation pushes %.0f/s\n", n, gets / el, pushes / el);
  return 0;
}
