# Goalpost on Node 24 (an LTS line) and Debian 13 "trixie" (glibc 2.41).
#
# The uWebSockets.js build that `npm ci` installs has native binaries up to Node 20 only (hence
# package.json "engines"), so the build stage runs Node 20 and then adds @btc-vision/uwebsockets.js,
# whose native builds cover Node 20/22/24 on glibc >= 2.38; src/http/uws.ts loads whichever native
# build works and refuses to start on none. The other native module, classic-level, is N-API and
# runs on any of these Node versions.
FROM node:20-trixie-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY src ./src
RUN npm run build && npm prune --omit=dev \
 && npm install --no-save --no-audit --no-fund --omit=dev @btc-vision/uwebsockets.js@20.57.0

FROM node:24-trixie-slim
WORKDIR /app
# two malloc arenas rather than one per allocating thread: a quarter to a third less RSS under
# saturation, at the same throughput (bench/RESULTS.md, 2026-11-26)
ENV NODE_ENV=production GOALPOST_DATA_DIR=/data MALLOC_ARENA_MAX=2
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY config ./config
# the service runs as `node`: its data directory must be that user's, and a named volume mounted
# here starts as a copy of it (a bind mount keeps the host directory's owner: make it uid 1000)
RUN mkdir -p /data && chown node:node /data
VOLUME /data
EXPOSE 8080
USER node
# the slim image has no curl: Node's own fetch asks /healthz
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.GOALPOST_PORT || 8080) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "dist/main.js"]
