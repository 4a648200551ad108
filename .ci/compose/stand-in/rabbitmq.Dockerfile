# Stand-in for rabbitmq:3.13-management (CI only): Debian's rabbitmq-server (3.10) with the management and
# prometheus plugins, run as the rabbitmq user, logging to stdout, reading /etc/rabbitmq/conf.d like the real image.
FROM ccpipe-ci/bookworm-minbase
RUN apt-get update \
 && apt-get install -y --no-install-recommends rabbitmq-server \
 && rm -rf /var/lib/apt/lists/* \
 && mkdir -p /etc/rabbitmq/conf.d /etc/rabbitmq/definitions \
 && printf 'NODENAME=rabbit@localhost\n' >/etc/rabbitmq/rabbitmq-env.conf \
 && echo '[rabbitmq_management,rabbitmq_prometheus].' >/etc/rabbitmq/enabled_plugins \
 && chown -R rabbitmq:rabbitmq /var/lib/rabbitmq /etc/rabbitmq
ENV HOME=/var/lib/rabbitmq \
    RABBITMQ_LOGS=- \
    RABBITMQ_CONFIG_FILES=/etc/rabbitmq/conf.d
USER rabbitmq
EXPOSE 5672 15672 15692
LABEL ccpipe.ci.stand-in="rabbitmq:3.13-management"
# the script itself, not the wrapper in /usr/sbin: as PID 1 the wrapper shell ignores SIGTERM, so every stop waited
# for the kill; the script traps it and stops the node
CMD ["/usr/lib/rabbitmq/bin/rabbitmq-server"]
