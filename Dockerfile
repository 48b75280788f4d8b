# nanovox's container image, for those who build with Docker or BuildKit.
# scripts/build-image builds the same image without a daemon; the deploy
# module's TestDockerfile fails when the two differ (user, entrypoint, port,
# environment, labels, files, build flags).
#
#   docker build --build-arg VERSION=$(git describe --tags --always) -t nanovox .
#   docker buildx build --platform linux/amd64,linux/arm64 -t REGISTRY/nanovox:TAG --push .

# The binary is cross-compiled on the build machine's platform: it is pure Go.
FROM --platform=$BUILDPLATFORM golang:1.26-trixie AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
ARG TARGETOS=linux
ARG TARGETARCH
RUN CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH \
    go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/nanovox ./cmd/nanovox
# Directories the final image needs, made here because it has no shell.
RUN mkdir -p /out/data /out/tmp && chmod 1777 /out/tmp

# An empty base: the static binary, CA certificates (Debian's
# ca-certificates from the builder) for the Hugging Face hub and S3, and a
# non-root user.
FROM scratch
ARG VERSION=dev
ARG REVISION=
ARG LICENSES=NOASSERTION
COPY deploy/rootfs/etc/passwd /etc/passwd
COPY deploy/rootfs/etc/group /etc/group
COPY deploy/rootfs/etc/nsswitch.conf /etc/nsswitch.conf
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=build --chown=65532:65532 /out/data /data
COPY --from=build /out/tmp /tmp
COPY --from=build /out/nanovox /nanovox
# serve reads NANOVOX_<FLAG> for every flag not given: the address stays
# 0.0.0.0:8080 whatever arguments a container is run with.
ENV PATH=/ \
    HOME=/data \
    NANOVOX_ADDR=0.0.0.0:8080 \
    NANOVOX_DATA_DIR=/data \
    HF_HOME=/data/huggingface
LABEL org.opencontainers.image.title="nanovox" \
      org.opencontainers.image.description="MOSS-TTS-Nano voice-cloning text-to-speech server with an OpenAI-compatible API" \
      org.opencontainers.image.source="https://github.com/nanovox/nanovox" \
      org.opencontainers.image.url="https://github.com/nanovox/nanovox" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.licenses="${LICENSES}" \
      org.opencontainers.image.revision="${REVISION}"
USER 65532:65532
WORKDIR /data
EXPOSE 8080/tcp
STOPSIGNAL SIGTERM
ENTRYPOINT ["/nanovox", "serve"]
