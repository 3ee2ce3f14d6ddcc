# Prometheus from Debian's package, configured to scrape rockcache (docker/prometheus.yml).
#   docker build -f docker/prometheus.Dockerfile -t rockcache-prometheus .
FROM debian:12-slim
RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
      --no-install-recommends prometheus && rm -rf /var/lib/apt/lists/* \
    && mkdir -p /var/lib/prometheus && chown prometheus:prometheus /var/lib/prometheus
COPY docker/prometheus.yml /etc/prometheus/prometheus.yml
USER prometheus
VOLUME /var/lib/prometheus
EXPOSE 9090
HEALTHCHECK --interval=5s --timeout=3s --retries=3 \
  CMD bash -c 'exec 3<>/dev/tcp/127.0.0.1/9090 && printf "GET /-/ready HTTP/1.0\r\n\r\n" >&3 && grep -q " 200 " <&3'
ENTRYPOINT ["prometheus", "--config.file=/etc/prometheus/prometheus.yml", \
            "--storage.tsdb.path=/var/lib/prometheus/metrics2", \
            "--web.console.libraries=/usr/share/prometheus/console_libraries", \
            "--web.console.templates=/etc/prometheus/consoles"]
