# twemproxy (Debian's nutcracker package) in front of the compose `sharded` profile's nodes.
#   docker build -f docker/nutcracker.Dockerfile -t rockcache-nutcracker .
FROM debian:12-slim
RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
      --no-install-recommends nutcracker && rm -rf /var/lib/apt/lists/*
COPY docker/nutcracker.yml /etc/nutcracker/rockcache.yml.in
COPY docker/nutcracker-entrypoint.sh /usr/local/bin/nutcracker-entrypoint
USER nobody
EXPOSE 22121 22222
HEALTHCHECK --interval=5s --timeout=3s --retries=3 \
  CMD bash -c 'exec 3<>/dev/tcp/127.0.0.1/22222 && grep -q nutcracker <&3'
ENTRYPOINT ["nutcracker-entrypoint"]
