# pkgscope: the mirror and the indexer in one small image.
#
#   docker build -t pkgscope:local .
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
ENV CGO_ENABLED=0 GOFLAGS=-trimpath
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    go build -ldflags="-s -w" -o /out/mirror ./cmd/mirror && \
    go build -ldflags="-s -w" -o /out/indexer ./cmd/indexer

FROM alpine:3.22
# uid/gid 10001: outside the range distributions give to host users, so a
# bind mount never maps the service onto a real account.
RUN addgroup -S -g 10001 pkgscope && \
    adduser -S -D -H -u 10001 -G pkgscope -h /var/lib/pkgscope pkgscope && \
    mkdir -p /var/lib/pkgscope && chown pkgscope:pkgscope /var/lib/pkgscope
COPY --from=build /out/mirror /out/indexer /usr/local/bin/
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
# No HEALTHCHECK here: the image also runs the indexer, which serves no
# HTTP. docker-compose.yml checks the mirrors with
# wget http://127.0.0.1:7878/readyz.
CMD ["mirror"]
