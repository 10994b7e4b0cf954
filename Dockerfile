# The service's image: `web` by default; `worker` and the migration are commands of the same
# image (docs/deploy.md). Multi-stage: the build stage compiles TypeScript with the dev
# dependencies; the runtime stage holds production dependencies, the compiled code and the
# files it reads at run time (config/, data/, the console's static assets), and runs as `node`.

FROM node:22-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# npm ci needs every workspace's manifest (the SDK and CLI packages: docs/cli.md); the service imports neither.
COPY packages/sdk/package.json ./packages/sdk/package.json
COPY packages/cli/package.json ./packages/cli/package.json
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY config ./config
COPY src ./src
RUN npm run build

FROM node:22-bookworm-slim AS runtime
WORKDIR /app
COPY package.json package-lock.json ./
COPY packages/sdk/package.json ./packages/sdk/package.json
COPY packages/cli/package.json ./packages/cli/package.json
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY config ./config
COPY data ./data
COPY src/api/pages/static ./src/api/pages/static
ENV HOST=0.0.0.0 PORT=3000 DATA_DIR=/tmp/vuln-triage
USER node
EXPOSE 3000
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# The web process's young generation: docs/deploy.md#node-options.
CMD ["node", "--max-semi-space-size=64", "--min-semi-space-size=16", "--no-allocation-site-pretenuring", "dist/src/main.js", "web"]
