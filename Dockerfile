# syntax=docker/dockerfile:1
# Mnemos in one container: the engine with its embedded Postgres (PGlite + pgvector) and the local ONNX model, rootless
# (uid 1000), data in /data. The same image runs the gateway (`docker run ... mnemos gateway`). See docs/deploy.md.

# Build stage: install everything, compile the TypeScript, then drop the development dependencies.
FROM node:22-bookworm-slim AS build
WORKDIR /app
# The manifests first, so the dependency layer is reused while only sources change.
COPY package.json package-lock.json .npmrc tsconfig.json tsconfig.base.json ./
COPY packages/engine/package.json packages/engine/
COPY packages/gateway/package.json packages/gateway/
COPY packages/client/package.json packages/client/
COPY packages/http-input/package.json packages/http-input/
COPY packages/integrations/package.json packages/integrations/
COPY packages/problems/package.json packages/problems/
COPY packages/console/package.json packages/console/
# onnxruntime's native CPU library (bin/napi-v6/linux/<arch>/libonnxruntime.so.1 and onnxruntime_binding.node) ships
# inside the onnxruntime-node npm package itself. Its install script only downloads the optional CUDA and TensorRT
# providers (linux/x64, from NuGet); this CPU image needs none of them, and no other install script builds anything it
# needs, so scripts are not run at all.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY packages/engine/src packages/engine/src
COPY packages/engine/tsconfig.json packages/engine/
COPY packages/gateway/src packages/gateway/src
COPY packages/gateway/tsconfig.json packages/gateway/
COPY packages/client/src packages/client/src
COPY packages/client/tsconfig.json packages/client/
COPY packages/http-input/src packages/http-input/src
COPY packages/http-input/tsconfig.json packages/http-input/
COPY packages/integrations/src packages/integrations/src
COPY packages/integrations/tsconfig.json packages/integrations/
COPY packages/problems/src packages/problems/src
COPY packages/problems/tsconfig.json packages/problems/
# The console is static files the gateway serves; Vite builds them here.
COPY packages/console/src packages/console/src
COPY packages/console/public packages/console/public
COPY packages/console/index.html packages/console/tsconfig.json packages/console/vite.config.ts packages/console/
# After the build only production dependencies stay; onnxruntime's prebuilt runtimes for other systems are dead weight
# here (the Linux ones, x64 and arm64, stay), and the build fails if this architecture's library is missing.
RUN npx tsc -b \
    && npm run build -w packages/console \
    && npm prune --omit=dev --ignore-scripts --no-audit --no-fund \
    && rm -rf node_modules/onnxruntime-node/bin/napi-v6/darwin node_modules/onnxruntime-node/bin/napi-v6/win32 \
    && test -f "node_modules/onnxruntime-node/bin/napi-v6/linux/$(node -p 'process.arch')/libonnxruntime.so.1"

# Run stage: Node, tini, the compiled packages and their production dependencies; no compiler, no sources.
FROM node:22-bookworm-slim
# tini is PID 1: it forwards SIGTERM/SIGINT to the engine (which then finishes in-flight requests and closes the
# database) and reaps zombies. Without it, run the image with `docker run --init`.
RUN apt-get update \
    && apt-get install -y --no-install-recommends tini=0.19.* \
    && rm -rf /var/lib/apt/lists/*
# One malloc arena for all the engine's threads: 55-70 MiB less resident memory (docs/decisions.md).
ENV NODE_ENV=production \
    MALLOC_ARENA_MAX=1 \
    MNEMOS_HOME=/data \
    MNEMOS_API_HOST=0.0.0.0 \
    MNEMOS_API_PORT=8888
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/packages/engine/package.json ./packages/engine/
COPY --from=build /app/packages/engine/dist ./packages/engine/dist
COPY --from=build /app/packages/gateway/package.json ./packages/gateway/
COPY --from=build /app/packages/gateway/dist ./packages/gateway/dist
COPY --from=build /app/packages/client/package.json ./packages/client/
COPY --from=build /app/packages/client/dist ./packages/client/dist
COPY --from=build /app/packages/http-input/package.json ./packages/http-input/
COPY --from=build /app/packages/http-input/dist ./packages/http-input/dist
COPY --from=build /app/packages/integrations/package.json ./packages/integrations/
COPY --from=build /app/packages/integrations/dist ./packages/integrations/dist
COPY --from=build /app/packages/problems/package.json ./packages/problems/
COPY --from=build /app/packages/problems/dist ./packages/problems/dist
COPY --from=build /app/packages/console/package.json ./packages/console/
COPY --from=build /app/packages/console/dist ./packages/console/dist
# /data belongs to uid 1000, so a new named volume mounted there does too (Docker copies the owner on first use).
RUN mkdir -p /data && chown 1000:1000 /data
# The node image's `node` user is uid 1000.
USER 1000:1000
VOLUME /data
EXPOSE 8888
# Liveness only (no database access). The first start downloads and loads the model, hence the long start period.
HEALTHCHECK --interval=30s --timeout=5s --start-period=180s --retries=3 \
    CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.MNEMOS_API_PORT}/health/live`).then( \
         (r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["tini", "--", "node", "/app/packages/engine/dist/cli.js"]
CMD ["serve"]
