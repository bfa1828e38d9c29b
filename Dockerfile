# Folio in a container: a static binary on a minimal base, run as a
# non-root user, data in a volume. Build: docker build -t folio .
# Run:   docker run -p 8081:8081 -v folio-data:/data folio
# With PostgreSQL: see deploy/compose.yaml.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=0.1.0-dev
RUN CGO_ENABLED=0 go build -trimpath -buildvcs=false -ldflags "-s -w -X main.version=${VERSION}" -o /out/folio ./cmd/folio \
	&& mkdir -p /out/data

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/folio /folio
COPY --from=build --chown=65532:65532 /out/data /data
USER 65532:65532
VOLUME /data
EXPOSE 8081
# Listens on every interface inside the container: publish the port only
# where it should be reached, and turn on --auth beyond a single machine.
ENV FOLIO_ADDR=:8081 FOLIO_DATA_DIR=/data
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
	CMD ["/folio", "status", "--json", "--url", "http://127.0.0.1:8081"]
ENTRYPOINT ["/folio"]
CMD ["serve"]
