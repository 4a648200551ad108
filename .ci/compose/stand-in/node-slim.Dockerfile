# Stand-in for node:20-bookworm-slim (CI only, where no image registry answers): Debian bookworm minbase plus the
# host's Node 20 binary, in the layout of Debian's nodejs package, and the `node` user (uid 1000) of the real image.
FROM ccpipe-ci/bookworm-minbase
COPY node /usr/bin/node
# the host's CA bundle: outbound HTTPS here is re-signed by a local authority the host trusts
COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
RUN echo 'node:x:1000:1000::/home/node:/bin/bash' >>/etc/passwd \
 && echo 'node:x:1000:' >>/etc/group \
 && echo 'node:*:19000:0:99999:7:::' >>/etc/shadow \
 && mkdir -p /home/node && chown node:node /home/node \
 && node --version
LABEL ccpipe.ci.stand-in="node:20-bookworm-slim"
CMD ["node"]
