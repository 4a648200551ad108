# Stand-in for prom/prometheus:v2.53.0 (CI only): Debian's prometheus (2.42) with the real image's entry point,
# arguments, user and data directory.
FROM ccpipe-ci/bookworm-minbase
RUN apt-get update \
 && apt-get install -y --no-install-recommends prometheus \
 && rm -rf /var/lib/apt/lists/* \
 && mkdir -p /prometheus /etc/prometheus \
 && chown nobody:nogroup /prometheus
USER nobody
WORKDIR /prometheus
EXPOSE 9090
LABEL ccpipe.ci.stand-in="prom/prometheus:v2.53.0"
ENTRYPOINT ["/usr/bin/prometheus"]
CMD ["--config.file=/etc/prometheus/prometheus.yml", "--storage.tsdb.path=/prometheus", "--web.console.libraries=/usr/share/prometheus/console_libraries", "--web.console.templates=/usr/share/prometheus/consoles"]
