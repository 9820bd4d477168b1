# Goalpost on a current LTS. Debian 13 (glibc 2.41) runs the btc-vision uWebSockets.js build, which
# ships native binaries for Node 20/22/24; src/http/uws.ts takes whichever native build loads.
FROM node:22-trixie-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY src ./src
RUN npm run build && npm prune --omit=dev \
 && npm install --no-save --omit=dev @btc-vision/uwebsockets.js@20.57.0

FROM node:22-trixie-slim
WORKDIR /app
ENV NODE_ENV=production GOALPOST_DATA_DIR=/data
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY config ./config
VOLUME /data
EXPOSE 8080
USER node
CMD ["node", "dist/main.js"]
