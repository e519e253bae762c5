# The tap as an Airbyte custom source and a Singer tap: one static binary in
# an empty image, running as the non-root user "airbyte". For Docker users:
#
#   docker build -t tap-dev/source-tap:0.2.0 .
#
# CI builds the same image with buildah from a binary it compiled first
# (image/Dockerfile.prebuilt, see .ci/run); the two files share the runtime
# stage below, line for line, and .ci/run fails if they drift apart.

# Fully qualified, as buildah and podman want it (no short-name lookup).
FROM docker.io/library/golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# CGO_ENABLED=0: no libc, so the binary runs in an image with nothing else.
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/rootfs/tap . \
 && mkdir -p /out/rootfs/etc/ssl/certs /out/rootfs/airbyte \
 && cp image/passwd image/group /out/rootfs/etc/ \
 && cp /etc/ssl/certs/ca-certificates.crt /out/rootfs/etc/ssl/certs/ \
 && cp sample_config.json catalog.json image/configured_catalog.json /out/rootfs/airbyte/

# --- runtime stage (identical in image/Dockerfile.prebuilt) ---
FROM scratch
COPY --from=build /out/rootfs/etc/ /etc/
COPY --from=build /out/rootfs/tap /tap
COPY --from=build --chown=1000:1000 /out/rootfs/airbyte/ /airbyte/
WORKDIR /airbyte
USER airbyte
ENV AIRBYTE_ENTRYPOINT="/tap"
ENTRYPOINT ["/tap"]
LABEL io.airbyte.name="tap-dev/source-tap" \
      io.airbyte.version="0.2.0"
