# pkgscope: the server (pkgscope) and the indexer (pkgscope-indexer) in
# one small image, the same binaries scripts/release.sh builds.
#
#   docker build -t pkgscope:local .
#   docker build -t pkgscope:0.1.0 --build-arg VERSION=v0.1.0 \
#     --build-arg COMMIT=$(git rev-parse HEAD) \
#     --build-arg DATE=$(TZ=UTC git log -1 --date=format-local:%Y-%m-%dT%H:%M:%SZ --format=%cd) .
#   docker run --rm -e npm_config_registry=... -p 7878:7878 pkgscope:local
#
# Both binaries are static (CGO_ENABLED=0: the SQLite driver, modernc, is
# pure Go), so the final stage needs only a CA bundle, a shell and wget
# for health checks, and a non-root user: Alpine, about 8 MB under the
# binaries. The image holds no npm: the registry comes from the
# npm_config_registry environment variable or an .npmrc mounted at
# $HOME/.npmrc (/var/lib/pkgscope/.npmrc) or in the working directory.

FROM golang:1.26 AS build
WORKDIR /src
# Modules first, so that a source change does not download them again.
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
# The version the binaries report (--version, /healthz, MCP, logs, the
# page footer); a build without these says "dev". The .git folder is not
# in the build context, hence -buildvcs=false and COMMIT/DATE given.
ARG VERSION=dev
ARG COMMIT=
ARG DATE=
ENV CGO_ENABLED=0 GOFLAGS=-trimpath
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    pkg=github.com/pkgscope/pkgscope/internal/version && \
    ldflags="-s -w -X $pkg.Version=$VERSION -X $pkg.Commit=$COMMIT -X $pkg.Date=$DATE" && \
    go build -buildvcs=false -ldflags="$ldflags" -o /out/pkgscope ./cmd/mirror && \
    go build -buildvcs=false -ldflags="$ldflags" -o /out/pkgscope-indexer ./cmd/indexer

FROM alpine:3.22
ARG VERSION=dev
ARG COMMIT=
ARG DATE=
LABEL org.opencontainers.image.title="pkgscope" \
      org.opencontainers.image.description="A caching mirror of npm packages for coding agents: list, glob, read, grep and diff over MCP, HTTP and a web page" \
      org.opencontainers.image.licenses="MIT" \
      org.opencontainers.image.version="$VERSION" \
      org.opencontainers.image.revision="$COMMIT" \
      org.opencontainers.image.created="$DATE"
# uid/gid 10001: outside the range distributions give to host users, so a
# bind mount never maps the service onto a real account.
RUN addgroup -S -g 10001 pkgscope && \
    adduser -S -D -H -u 10001 -G pkgscope -h /var/lib/pkgscope pkgscope && \
    mkdir -p /var/lib/pkgscope && chown pkgscope:pkgscope /var/lib/pkgscope
COPY --from=build /out/pkgscope /out/pkgscope-indexer /usr/local/bin/
COPY LICENSE /usr/share/doc/pkgscope/
USER 10001:10001
WORKDIR /var/lib/pkgscope
# Listen on every interface inside the container (the binary's default is
# loopback); data-dir holds the embedded store or, with Postgres, the
# node's search-index cache.
ENV PKGSCOPE_ADDR=:7878 \
    PKGSCOPE_DATA_DIR=/var/lib/pkgscope \
    HOME=/var/lib/pkgscope
VOLUME /var/lib/pkgscope
EXPOSE 7878
# Liveness: /healthz answers while the process serves (readyz, which
# docker-compose.yml's replicas use, also needs the store). A container
# running pkgscope-indexer serves no HTTP: turn it off there
# (compose: healthcheck: disable: true; docker run --no-healthcheck).
HEALTHCHECK --interval=30s --timeout=3s --start-period=30s --retries=3 \
    CMD wget -q -O /dev/null http://127.0.0.1:7878/healthz || exit 1
CMD ["pkgscope"]
