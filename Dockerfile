# `tollgate serve` as an image: the rate limit service for Envoy (gRPC, 8081) and nginx / Traefik (HTTP, 8080).
#   docker build -t tollgate .
#   docker run -v "$PWD/config:/config:ro" -e REDIS_URL=redis://redis:6379 -p 8080:8080 -p 8081:8081 tollgate
# The configuration is envoyproxy/ratelimit's YAML in /config (mount the folder, not a file, so edits reload).

# Build the package as npm would publish it, then install that tarball alone: the image runs what users install.
FROM node:20-slim AS pack
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN mkdir /pack && npm pack --pack-destination /pack

FROM node:20-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=pack /pack/ /tmp/pack/
# The optional peers the service loads: gRPC and YAML always, ioredis when REDIS_* names a Redis.
RUN npm install --omit=dev --no-audit --no-fund /tmp/pack/tollgate-*.tgz \
      @grpc/grpc-js@^1.10 yaml@^2.4 ioredis@^6 \
    && rm -rf /tmp/pack \
    && npm cache clean --force
USER node
EXPOSE 8080 8081
# 0.0.0.0: in a container, the proxy is on another address. Publish the ports to the proxy alone: the
# service asks no credentials.
ENTRYPOINT ["node", "/app/node_modules/tollgate/dist/cli.js"]
CMD ["serve", "--config", "/config", "--host", "0.0.0.0"]
# The slim image has no curl: Node asks /healthcheck on port 8080, the default --http-port (503 while no domain is
# loaded, the store does not answer or the service drains). Serving HTTP on another port? Set HEALTHCHECK_PORT to it.
ENV HEALTHCHECK_PORT=8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.HEALTHCHECK_PORT}/healthcheck`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
