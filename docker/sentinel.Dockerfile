# Redis Sentinel (Debian's redis-sentinel) for the compose `ha` profile, and redis-py
# (python3-redis) and redis-cli for Sentinel-aware clients on the same network (the ha-client
# service; scripts/compose-test.sh drives its failover checks from it).
#   docker build -f docker/sentinel.Dockerfile -t rockcache-sentinel .
FROM debian:12-slim
RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
      --no-install-recommends redis-sentinel python3-redis && rm -rf /var/lib/apt/lists/* \
    && (getent passwd redis >/dev/null || useradd --system --user-group --home-dir /sentinel \
          --shell /usr/sbin/nologin redis) \
    && mkdir -p /sentinel && chown redis:redis /sentinel
COPY docker/sentinel-entrypoint.sh /usr/local/bin/sentinel-entrypoint
USER redis
WORKDIR /sentinel
EXPOSE 26379
# PONG within 3 s (REDISCLI_AUTH: the password, when set, as the entrypoint's requirepass).
HEALTHCHECK --interval=5s --timeout=3s --start-period=10s --retries=3 \
  CMD env ${ROCKCACHE_PASSWORD:+REDISCLI_AUTH="$ROCKCACHE_PASSWORD"} redis-cli -p 26379 ping \
      | grep -q PONG
ENTRYPOINT ["sentinel-entrypoint"]
