# kivi in a slim image, for `kivi job` (an Indexed Job of sweep shards) or any one-off check:
#   docker build -t kivi .
#   docker run --rm kivi check --case c3
# The build stage compiles the release binary; the image keeps only it, on Debian slim (the
# Job's pods run kivi from /bin/sh to turn its answers into a Job's success), as a non-root user.
FROM rust:1-bookworm AS build
WORKDIR /src
COPY . .
RUN CARGO_PROFILE_RELEASE_DEBUG=false cargo build --release --locked --bin kivi \
    && strip target/release/kivi

FROM debian:bookworm-slim
COPY --from=build /src/target/release/kivi /usr/local/bin/kivi
USER 65532:65532
WORKDIR /work
ENTRYPOINT ["kivi"]
CMD ["--help"]
