# Dockerfile - mnemod in two stages on debian:bookworm-slim
#   build:   compiles with the -dev packages and runs the unit tests (a failing test fails the build)
#   runtime: the binary, its runtime libraries and curl for the health check; runs as non-root
#
#   docker build -t mnemod .
#   docker run -d -p 127.0.0.1:6636:6636 -v mnemod-data:/data -e MEMU_RECENCY_HALF_LIFE=90 mnemod
#
# Every MNEMOD_* / MEMU_* variable and every flag works (flags go after the image name).
# Online backup into the volume:  docker exec CONTAINER mnemod backup /data/backup.db
# Tested with podman (no Docker engine needed): make docker-test

FROM debian:bookworm-slim AS build
ENV DEBIAN_FRONTEND=noninteractive
RUN apt-get update \
    && apt-get install -y --no-install-recommends build-essential pkg-config libuv1-dev \
       libmicrohttpd-dev libjansson-dev libsqlite3-dev libcmocka-dev libnats-dev \
       libcurl4-openssl-dev libutf8proc-dev libstemmer-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN make -j"$(nproc)" all \
    && sh scripts/run-tests.sh build/release unit \
    && strip --strip-debug -o /mnemod build/release/mnemod

FROM debian:bookworm-slim AS runtime
ENV DEBIAN_FRONTEND=noninteractive
RUN apt-get update \
    && apt-get install -y --no-install-recommends libuv1 libmicrohttpd12 libjansson4 \
       libsqlite3-0 libnats3.4 libcurl4 ca-certificates libutf8proc2 libstemmer0d curl \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --user-group --home-dir /data --no-create-home \
       --shell /usr/sbin/nologin mnemod \
    && mkdir -p /data \
    && chown mnemod:mnemod /data
COPY --from=build /mnemod /usr/local/bin/mnemod
COPY docs/mnemod.1 /usr/local/share/man/man1/mnemod.1
COPY etc/mnemod.conf.sample /etc/mnemod/mnemod.conf.sample
ENV MNEMOD_LISTEN=0.0.0.0:6636 \
    MNEMOD_DATA=/data/mnemod.db
VOLUME /data
WORKDIR /data
EXPOSE 6636
USER mnemod
# Follows the port of MNEMOD_LISTEN; /healthz answers 503 while loading or draining.
# (No --start-period: dockerfilelint rejects it; 3 retries x 30s cover a slow load.)
HEALTHCHECK --interval=30s --timeout=3s --retries=3 \
    CMD curl -fsS -o /dev/null "http://127.0.0.1:${MNEMOD_LISTEN##*:}/healthz" || exit 1
# SIGTERM drains in-flight requests and flushes the writer, then exits 0.
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/mnemod"]
