# rota's image for those who build with Docker or Buildah (`docker build -t rota:0.1.0 .`).
# `make image` builds the same contents without a daemon or a base image (hack/image.sh).
FROM debian:bookworm AS build
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      build-essential cmake ninja-build pkg-config libcurl4-openssl-dev nlohmann-json3-dev libyaml-cpp-dev \
      libspdlog-dev libboost-dev libssl-dev libjemalloc-dev libcli11-dev libsimdjson-dev libhowardhinnant-date-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN cmake -S . -B /build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DROTA_BUILD_TESTS=OFF -DROTA_BUILD_BENCH=OFF \
    && cmake --build /build --target rota \
    && objcopy --strip-debug /build/bin/rota /rota

FROM debian:bookworm-slim
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      libcurl4 libssl3 libyaml-cpp0.7 libspdlog1.10 libjemalloc2 libsimdjson14 libdate-tz3 tzdata \
    && rm -rf /var/lib/apt/lists/* \
    && groupadd --gid 65532 rota && useradd --uid 65532 --gid 65532 --home-dir /home/rota --create-home rota
COPY --from=build /rota /usr/bin/rota
USER 65532:65532
WORKDIR /home/rota
ENTRYPOINT ["/usr/bin/rota"]
CMD ["run"]
