# Stand-in for node:20-bookworm (CI only): the slim stand-in plus the host's npm, Node's C headers and a compiler,
# so that roaring builds from source (its prebuilt download is not reachable here).
FROM node:20-bookworm-slim
COPY npm /usr/lib/node_modules/npm
COPY include-node /usr/include/node
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/bin/npm \
 && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/bin/npx \
 && apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/* \
 && npm --version
ENV npm_config_nodedir=/usr \
    npm_config_build_from_source=true \
    npm_config_cafile=/etc/ssl/certs/ca-certificates.crt
LABEL ccpipe.ci.stand-in="node:20-bookworm"
CMD ["node"]
