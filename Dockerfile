# One image for every docindex process: `serve`, `serve --no-worker`, `worker`, `migrate` and the
# administration commands are its arguments (see docker-compose.yml).
FROM node:20-bookworm-slim AS build
WORKDIR /app
# Sources first: `npm ci` runs the `prepare` script, which compiles them; better-sqlite3 fetches
# its prebuilt binary in its install script, so scripts must run.
COPY package.json package-lock.json .npmrc tsconfig.json ./
COPY bin ./bin
COPY src ./src
COPY scripts ./scripts
RUN npm ci --no-audit --no-fund && npm prune --omit=dev

FROM node:20-bookworm-slim
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    DATA_DIR=/data \
    BLOB_DIR=/data/blobs
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY bin ./bin
COPY console ./console
# The blob folder is a volume shared by every API and worker container; created here so that a
# new named volume starts out owned by the unprivileged user.
RUN mkdir -p /data/blobs && chown -R node:node /data
USER node
EXPOSE 8080
ENTRYPOINT ["node", "bin/docindex.js"]
CMD ["serve"]
