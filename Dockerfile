# syntax=docker/dockerfile:1
#
# The nbv image: the operator (`nbv run`), its tools (`nbv wait` for Argo CD hooks,
# `nbv crd`, `nbv triggers lint`, ...), one entry point, /nbv; and what every validation
# Pod takes from it: its init containers run this image, `nbv pod install` copies /nbv
# into the Pod for the notebook container, `nbv pod clone` drives git and ssh.
#
#   docker build -t ghcr.io/nbv-dev/nbv:0.2.0 .
#
# amd64 is the architecture nbv is released and tested for. The build also works for
# arm64 (`docker buildx build --platform linux/arm64 .`, natively or under emulation:
# the builder runs on the target's architecture and builds for it), untested.

# nbv is linked statically against musl, with no dependence on any file of the image it
# runs in: the notebook container runs the copied /nbv in the user's image, whatever its
# libc (glibc, musl, or none). musl rather than a static glibc: glibc's getaddrinfo
# loads NSS modules from the image at run time, musl's resolver reads /etc/hosts and
# /etc/resolv.conf itself, so cluster DNS names resolve in any image.
FROM rust:1.95-bookworm AS builder
WORKDIR /src
ENV CARGO_PROFILE_RELEASE_STRIP=symbols \
    CC_x86_64_unknown_linux_musl=musl-gcc \
    CC_aarch64_unknown_linux_musl=musl-gcc
# musl-gcc (Debian's musl-tools) compiles the C of the build: the vendored Lua of the
# health-check sandbox (nbv-lua) and ring's, through the cc crate. `file` checks the
# result below. The Rust target is the builder's own architecture's musl target,
# written to /rust-target for the builds below.
RUN apt-get update \
    && apt-get install -y --no-install-recommends musl-tools file \
    && rm -rf /var/lib/apt/lists/* \
    && arch="$(dpkg --print-architecture)" \
    && case "$arch" in \
         amd64) echo x86_64-unknown-linux-musl ;; \
         arm64) echo aarch64-unknown-linux-musl ;; \
         *) echo "nbv's image builds for amd64 and arm64, not $arch" >&2; exit 1 ;; \
       esac > /rust-target \
    && rustup target add "$(cat /rust-target)"

# Built with nbv-operator's default features, which leave out `simulate`: `nbv
# simulate`, its stand-in kubelet, KServe and Argo CD, and the test kit they run on
# (nbv-testkit, proptest, tokio's test-util) are for development machines and CI, not
# the cluster. `.ci/run` checks that this build's dependency tree holds no test crate.
#
# 1. Dependencies only: the workspace manifests and the lock file with empty crates.
#    This layer is rebuilt only when a Cargo.toml or Cargo.lock changes. The benchmarks
#    and the fuzz targets are workspace members that the image does not build; cargo
#    only needs them to load the workspace, so they are copied as they are.
COPY Cargo.toml Cargo.lock ./
COPY nbv-core/Cargo.toml nbv-core/
COPY nbv-kube/Cargo.toml nbv-kube/
COPY nbv-lua/Cargo.toml nbv-lua/
COPY nbv-operator/Cargo.toml nbv-operator/
COPY nbv-testkit/Cargo.toml nbv-testkit/
COPY benches benches
COPY nbv-fuzz nbv-fuzz
RUN mkdir -p nbv-core/src nbv-kube/src nbv-lua/src nbv-operator/src nbv-testkit/src \
    && touch nbv-core/src/lib.rs nbv-kube/src/lib.rs nbv-lua/src/lib.rs nbv-operator/src/lib.rs nbv-testkit/src/lib.rs \
    && echo 'fn main() {}' > nbv-operator/src/main.rs \
    && cargo build --release --locked -p nbv-operator --target "$(cat /rust-target)" \
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
# The build fails unless the binary runs and is static: `file` says "static-pie linked"
# (or "statically linked") and ldd finds no library ("statically linked", or "not a
# dynamic executable"). A dynamic nbv would start in this image and fail in a user's.
RUN touch nbv-core/src/lib.rs nbv-kube/src/lib.rs nbv-lua/src/lib.rs nbv-operator/src/lib.rs nbv-operator/src/main.rs \
    && cargo build --release --locked -p nbv-operator --target "$(cat /rust-target)" \
    && mkdir -p /out/usr/local/bin \
    && install -m 0755 "target/$(cat /rust-target)/release/nbv" /out/nbv \
    && ln -s /nbv /out/usr/local/bin/nbv \
    && /out/nbv --version \
    && file /out/nbv \
    && if ! file /out/nbv | grep -Eq 'static-pie linked|statically linked' \
          || ! { ldd /out/nbv 2>&1 || true; } | grep -Eq 'statically linked|not a dynamic executable'; then \
         ldd /out/nbv || true; \
         echo "/out/nbv is not a static executable: the validation Pod runs it in images with any libc" >&2; \
         exit 1; \
       fi

# 3. Proof that nbv needs nothing from the image it runs in: it runs in an empty one (no
#    libc, no shell, no /etc/nsswitch.conf). The runtime stage copies nbv from here, so
#    this stage is always built.
FROM scratch AS static
COPY --from=builder /out/nbv /nbv
RUN ["/nbv", "--version"]

# The runtime: nbv, and for `nbv pod clone` git, ssh and CA certificates (Debian 12).
FROM debian:bookworm-slim
LABEL org.opencontainers.image.title="nbv" \
      org.opencontainers.image.description="GitOps coordination of NotebookValidationJobs with Argo CD" \
      org.opencontainers.image.source="https://github.com/nbv-dev/nbv" \
      org.opencontainers.image.licenses="Apache-2.0"
# /etc/passwd is writable by group 0 (`chmod g=u`), the group OpenShift runs every
# container in: ssh refuses to run for a user id without a passwd entry, and OpenShift's
# restricted-v2 assigns a user id from the namespace's range that no image knows, so
# `nbv pod clone` adds the entry for an SSH URL. The Deployment's root filesystem is
# read-only, so the operator's own container cannot change it. The image's own user,
# 65532, gets an entry here (`nonroot`, as in distroless), with the writable /tmp as
# home; the clone on Kubernetes runs as 65534, Debian's `nobody`.
RUN apt-get update \
    && apt-get install -y --no-install-recommends git openssh-client ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && echo 'nonroot:x:65532:0:nonroot:/tmp:/usr/sbin/nologin' >> /etc/passwd \
    && chmod g=u /etc/passwd
# /nbv, and /usr/local/bin/nbv linking to it so that `command: ["nbv"]` works too (the
# directory copy keeps the link).
COPY --from=static /nbv /nbv
COPY --from=builder /out/usr/ /usr/
# A numeric non-root user, so that Kubernetes can check runAsNonRoot without a passwd
# lookup, in group 0. The manifests pin no user: OpenShift's restricted-v2 runs the
# container as an arbitrary user id from the namespace's range, in group 0. That works
# because nothing here depends on the user: /nbv and the link are mode 0755 (readable
# and executable by group 0 and everyone), and nbv writes no file but the passwd entry
# above and, in the validation Pod, its emptyDir volumes.
USER 65532:0
ENTRYPOINT ["/nbv"]
CMD ["run"]
