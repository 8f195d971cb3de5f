# The skillbundle binary in a small image, for `skillbundle serve` in front of any A2A
# agent (README: "Enforcing a bundle in front of any agent"; a Kubernetes sidecar in
# examples/kubernetes/). Two stages: cargo builds the release binary the way CI builds
# (`--locked`: exactly the committed Cargo.lock); the runtime stage is Debian slim with CA
# certificates (for `--bundle oci://` over HTTPS) and nothing else, running as a non-root
# user. Nothing is fetched when the container runs.
#
#   docker build -t skillbundle .
#   docker run --rm -p 8080:8080 -v "$PWD/keys:/keys:ro" -v "$PWD/dist:/bundles:ro" skillbundle \
#       serve --bundle /bundles/example-network-skills-0.1.0.tar.gz --trust /keys/vendor.jwk.json \
#       --upstream http://agent.internal:9000 --listen 0.0.0.0:8080

FROM rust:1.95.0-slim-bookworm AS build
WORKDIR /src
# .dockerignore keeps target/, dist/ and the other build outputs out of the context.
COPY . .
RUN cargo build --release --locked --bin skillbundle \
    && install -m 0755 target/release/skillbundle /usr/local/bin/skillbundle

FROM debian:bookworm-slim
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --home-dir /nonexistent --shell /usr/sbin/nologin skillbundle \
    && mkdir -p /var/lib/skillbundle \
    && chown skillbundle /var/lib/skillbundle
COPY --from=build /usr/local/bin/skillbundle /usr/local/bin/skillbundle
USER 10001
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/skillbundle"]
CMD ["serve", "--help"]
