# syntax=docker/dockerfile:1
# One image for every ccpipe service; the compose file picks the command (batcher, worker, merge, api).

# --- build: compile TypeScript and the native addons (roaring, better-sqlite3), then drop dev dependencies ---------------------------
FROM node:20-bookworm AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
# manifests first so the dependency layer is cached across source edits
COPY package.json package-lock.json tsconfig.json tsconfig.base.json ./
COPY packages/core/package.json packages/core/
COPY packages/adapters/package.json packages/adapters/
COPY packages/mirror/package.json packages/mirror/
COPY packages/batcher/package.json packages/batcher/
COPY packages/worker/package.json packages/worker/
COPY packages/import/package.json packages/import/
COPY packages/index/package.json packages/index/
COPY packages/api/package.json packages/api/
COPY packages/cli/package.json packages/cli/
COPY packages/search/package.json packages/search/
# --ignore-scripts: the root `prepare` (tsc -b) needs the sources, which are not copied yet; roaring and better-sqlite3,
# the runtime packages with a native build, are rebuilt explicitly below.
RUN npm ci --no-audit --no-fund --ignore-scripts && npm rebuild roaring better-sqlite3
COPY packages packages
RUN npm run build && npm prune --omit=dev --no-audit --no-fund

# --- runtime -----------------------------------------------------------------------------------------------------
FROM node:20-bookworm-slim
ENV NODE_ENV=production \
    CCPIPE_DATA=/data
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules node_modules
COPY --from=build /app/packages packages
# /cache: the merger's cache of lake and index files over an S3 store (CCPIPE_MERGE_CACHE_DIR in docker-compose.yml)
RUN mkdir -p /data /cache && chown node:node /data /cache
USER node
VOLUME ["/data"]
# batcher /metrics, worker /metrics, merger /metrics, api (which serves its own /metrics)
EXPOSE 9000 9001 9002 8080
# /healthz of the service's metrics server (batcher, worker, merger: CCPIPE_METRICS_PORT) or of the api.
HEALTHCHECK --interval=15s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "const p=process.env.CCPIPE_METRICS_PORT||process.env.CCPIPE_API_PORT||'9001';fetch('http://127.0.0.1:'+p+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
ENTRYPOINT ["node", "packages/cli/bin/ccpipe.js"]
CMD ["--help"]
