# The tap as an Airbyte custom source and a Singer tap: one static binary
# in an empty image, running as the non-root user "airbyte".
#
#   docker build -t tap .
#   docker run --rm -v "$PWD:/airbyte/work" tap --config /airbyte/work/config.json     # Singer
#   docker run --rm -v "$PWD:/airbyte/work" tap read --config ... --catalog ...        # Airbyte

FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/tap . \
 && mkdir -p /out/rootfs/etc /out/rootfs/airbyte \
 && echo 'airbyte:x:1000:1000:airbyte:/airbyte:/sbin/nologin' > /out/rootfs/etc/passwd \
 && echo 'airbyte:x:1000:' > /out/rootfs/etc/group

FROM scratch
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=build /out/rootfs/etc/passwd /out/rootfs/etc/group /etc/
COPY --from=build --chown=1000:1000 /out/rootfs/airbyte /airbyte
COPY --from=build /out/tap /tap
COPY --chown=1000:1000 sample_config.json catalog.json /airbyte/
WORKDIR /airbyte
USER airbyte
ENV AIRBYTE_ENTRYPOINT="/tap"
ENTRYPOINT ["/tap"]
LABEL io.airbyte.name="tap-dev/source-tap" \
      io.airbyte.version="0.1.0"
