# sluice's image: `docker build -t sluice .`, or `docker compose up --build` (compose.yaml).
# Each step that makes or starts the app is a script that the test suite runs for real
# (test/package/package.test.ts): scripts/container/build.sh builds the app directory and
# scripts/container/entrypoint.sh starts it. `docker build` itself is not run there (no Docker
# engine): docs/operations.md, "Container", says what is tested and what is not.

# Build: the full image has python3, make and g++, should better-sqlite3 need compiling.
FROM node:20-bookworm AS build
WORKDIR /src
COPY package.json package-lock.json ./
# The workspace packages' manifests (@sluice/limiter, @sluice/client): npm ci links them.
COPY packages/limiter/package.json packages/limiter/
COPY packages/client/package.json packages/client/
RUN npm ci --no-audit --no-fund
COPY . .
RUN scripts/container/build.sh /build

# Run: the package's files and its production dependencies, as a user without privileges.
FROM node:20-bookworm-slim
COPY --from=build /build/app /app
# SQLite's file and the secret key file default to ./data/ under the working directory: a volume.
RUN mkdir -p /var/lib/sluice/data && chown -R node:node /var/lib/sluice
WORKDIR /var/lib/sluice
VOLUME /var/lib/sluice
USER node
# Reachable from outside the container; the image's port is the default one.
ENV SLUICE_HOST=0.0.0.0
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.SLUICE_PORT || 3000}/readyz`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["/app/entrypoint.sh"]
CMD ["serve"]
