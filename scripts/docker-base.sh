#!/usr/bin/env bash
# Makes sure the base images docker/Dockerfile builds from exist locally: debian:12 and
# debian:12-slim. An image already present is left alone; a missing one is pulled when a registry
# answers, and otherwise built from Debian's packages with debootstrap and `docker import`, from
# the same package source as the host's apt (its sources, and its proxy if apt has one). So
# `docker compose build` works on a machine with no image registry, and nothing changes on one
# that has a registry.
#
#   scripts/docker-base.sh            # ensure debian:12 and debian:12-slim
#   DOCKER_BASE_REBUILD=1 scripts/docker-base.sh   # rebuild them with debootstrap anyway
#
# Needs root (debootstrap chroots) and the debootstrap package (installed when missing).
set -euo pipefail

SUITE=bookworm
FULL_TAG=debian:12
SLIM_TAG=debian:12-slim

log() { echo "docker-base: $*" >&2; }

have_image() { docker image inspect "$1" >/dev/null 2>&1; }

missing=()
for tag in "$FULL_TAG" "$SLIM_TAG"; do
  if [ -z "${DOCKER_BASE_REBUILD:-}" ] && have_image "$tag"; then continue; fi
  if [ -z "${DOCKER_BASE_REBUILD:-}" ] && timeout 120 docker pull -q "$tag" >/dev/null 2>&1; then
    log "$tag pulled from the registry"
    continue
  fi
  missing+=("$tag")
done
[ "${#missing[@]}" -eq 0 ] && { log "debian:12 and debian:12-slim present"; exit 0; }
log "building ${missing[*]} with debootstrap (no registry answered)"

SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
if ! command -v debootstrap >/dev/null; then
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap </dev/null
fi

# The host's Debian package source, read from its apt configuration at run time: the archive
# that serves $SUITE, plus the updates and security suites it also uses.
mapfile -t repos < <(apt-get indextargets --format '$(REPO_URI) $(RELEASE)' 'Identifier: Packages' \
  2>/dev/null | sort -u | awk -v s="$SUITE" '$2 == s || $2 == s "-updates" || $2 == s "-security"')
mirror=""
for r in "${repos[@]}"; do
  set -- $r
  [ "$2" = "$SUITE" ] && mirror="$1"
done
if [ -z "$mirror" ]; then
  log "the host's apt has no $SUITE source; set one up (or pull $FULL_TAG) first"; exit 1
fi
# apt's proxy, if the host reaches Debian through one (Acquire::http::Proxy), is used the same way.
eval "$(apt-config shell APT_HTTP_PROXY Acquire::http::Proxy APT_HTTPS_PROXY Acquire::https::Proxy)"
[ -n "${APT_HTTP_PROXY:-}" ] && export http_proxy="$APT_HTTP_PROXY"
[ -n "${APT_HTTPS_PROXY:-}" ] && export https_proxy="$APT_HTTPS_PROXY"

work=$(mktemp -d /tmp/rockcache-docker-base.XXXXXX)
cleanup() { $SUDO rm -rf --one-file-system "$work"; }
trap cleanup EXIT
root="$work/rootfs"

# Extra packages baked into the base (DOCKER_BASE_INCLUDE=pkg1,pkg2): only for a machine whose
# build containers cannot reach Debian's packages at all (see README, "Docker without a registry").
include=()
[ -n "${DOCKER_BASE_INCLUDE:-}" ] && include=(--include="$DOCKER_BASE_INCLUDE")
nice $SUDO debootstrap --variant=minbase "${include[@]}" "$SUITE" "$root" "$mirror" >"$work/log" 2>&1 \
  || { tail -20 "$work/log" >&2; log "debootstrap failed"; exit 1; }

# apt inside the image uses the same sources as the host (no keyring path: the image has its own).
: | $SUDO tee "$root/etc/apt/sources.list" >/dev/null
for r in "${repos[@]}"; do
  set -- $r
  echo "deb ${1%/} $2 main" | $SUDO tee -a "$root/etc/apt/sources.list" >/dev/null
done
# Like the official images: no apt caches or package lists kept in the layers.
$SUDO tee "$root/etc/apt/apt.conf.d/docker-clean" >/dev/null <<'EOF'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache ""; Dir::Cache::srcpkgcache "";
EOF
echo 'Acquire::Languages "none";' | $SUDO tee "$root/etc/apt/apt.conf.d/docker-no-languages" >/dev/null
# No service starts while a package is installed during `docker build` (as in the official images).
printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$root/usr/sbin/policy-rc.d" >/dev/null
$SUDO chmod 755 "$root/usr/sbin/policy-rc.d"
$SUDO rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin "$root"/var/cache/apt/archives/*.deb

import() {  # import TAG: the rootfs as one layer
  $SUDO tar --numeric-owner -C "$root" -c . | docker import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'CMD ["bash"]' - "$1" >/dev/null
  log "$1 imported ($(docker image inspect -f '{{.Size}}' "$1" | numfmt --to=iec))"
}
for tag in "${missing[@]}"; do [ "$tag" = "$FULL_TAG" ] && import "$FULL_TAG"; done
for tag in "${missing[@]}"; do
  [ "$tag" = "$SLIM_TAG" ] || continue
  # Slim, as the official debian:12-slim: no documentation, manual pages or locales, now or later.
  $SUDO tee "$root/etc/dpkg/dpkg.cfg.d/docker" >/dev/null <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
path-include /usr/share/locale/locale.alias
path-exclude /usr/share/lintian/*
EOF
  $SUDO find "$root/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete
  $SUDO rm -rf "$root"/usr/share/man/* "$root"/usr/share/info/* "$root"/usr/share/lintian/*
  $SUDO find "$root/usr/share/locale" -mindepth 1 -maxdepth 1 -not -name locale.alias \
    -exec rm -rf {} +
  import "$SLIM_TAG"
done
