# syntax=docker/dockerfile:1
#
# The nbv image: the operator (`nbv run`) and its tools (`nbv wait` for Argo CD hooks,
# `nbv crd`, `nbv triggers lint`, ...), one entry point, /nbv.
#
#   docker build -t ghcr.io/nbv-dev/nbv:0.2.0 .

# The builder is Debian 12 (bookworm), like the runtime image: the binary links glibc
# dynamically (the vendored Lua of the health-check sandbox, nbv-lua, is built with the
# system C compiler), so it must not be built against a newer glibc than the runtime has.
FROM rust:1.95-bookworm AS builder
WORKDIR /src
ENV CARGO_PROFILE_RELEASE_STRIP=symbols

# Built with nbv-operator's default features, which leave out `simulate`: `nbv
# simulate`, its stand-in kubelet, KServe and Argo CD, and the test kit they run on
# (nbv-testkit, proptest, tokio's test-util) are for development machines and CI, not
# the cluster. `.ci/run` checks that this build's dependency tree holds no test crate.
#
# 1. Dependencies only: the workspace manifests and the lock file with empty crates.
#    This layer is rebuilt only when a Cargo.toml or Cargo.lock changes. The benchmarks
#    are a workspace member that the image does not build; cargo only needs them to
#    load the workspace, so they are copied as they are.
COPY Cargo.toml Cargo.lock ./
COPY nbv-core/Cargo.toml nbv-core/
COPY nbv-kube/Cargo.toml nbv-kube/
COPY nbv-lua/Cargo.toml nbv-lua/
COPY nbv-operator/Cargo.toml nbv-operator/
COPY nbv-testkit/Cargo.toml nbv-testkit/
COPY benches benches
RUN mkdir -p nbv-core/src nbv-kube/src nbv-lua/src nbv-operator/src nbv-testkit/src \
    && touch nbv-core/src/lib.rs nbv-kube/src/lib.rs nbv-lua/src/lib.rs nbv-operator/src/lib.rs nbv-testkit/src/lib.rs \
    && echo 'fn main() {}' > nbv-operator/src/main.rs \
    && cargo build --release --locked -p nbv-operator \
    && rm -rf nbv-core/src nbv-kube/src nbv-lua/src nbv-operator/src nbv-testkit/src

# 2. nbv itself. COPY keeps the files' modification times, which may be older than the
#    placeholder build above; touching the crate roots makes cargo rebuild them.
COPY nbv-core nbv-core
COPY nbv-kube nbv-kube
COPY nbv-lua nbv-lua
COPY nbv-operator nbv-operator
COPY nbv-testkit nbv-testkit
# Files compiled into nbv (include_str!): the manifests `nbv olm` and the metrics' alert
# rules are rendered from. (examples/ holds the built-in scenario of `nbv simulate`,
# which this build leaves out.)
COPY config config
RUN touch nbv-core/src/lib.rs nbv-kube/src/lib.rs nbv-lua/src/lib.rs nbv-operator/src/lib.rs nbv-operator/src/main.rs \
    && cargo build --release --locked -p nbv-operator \
    && mkdir -p /out/usr/local/bin \
    && install -m 0755 target/release/nbv /out/nbv \
    && ln -s /nbv /out/usr/local/bin/nbv \
    && /out/nbv --version

# The runtime: glibc, libgcc and CA certificates, no shell, no package manager.
FROM gcr.io/distroless/cc-debian12:nonroot
LABEL org.opencontainers.image.title="nbv" \
      org.opencontainers.image.description="GitOps coordination of NotebookValidationJobs with Argo CD" \
      org.opencontainers.image.source="https://github.com/nbv-dev/nbv" \
      org.opencontainers.image.licenses="Apache-2.0"
# /nbv, and /usr/local/bin/nbv linking to it so that `command: ["nbv"]` works too (the
# directory copy keeps the link).
COPY --from=builder /out/ /
# A numeric non-root user (distroless's nonroot, 65532), so that Kubernetes can check
# runAsNonRoot without a passwd lookup. The manifests pin no user: OpenShift's
# restricted-v2 runs the container as an arbitrary user id from the namespace's range,
# in group 0. That works because nothing here depends on the user: /nbv and the link
# are mode 0755 (readable and executable by group 0 and everyone), nbv writes no file
# (the Deployment's root filesystem is read-only) and never looks its user up in
# /etc/passwd.
USER 65532:65532
ENTRYPOINT ["/nbv"]
CMD ["run"]
