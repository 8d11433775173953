#!/usr/bin/env bash
# Installs the system packages nuce needs, when missing (idempotent).
# Works as root or through sudo. Extra package names may be given as arguments.
set -euo pipefail
# cmake and g++: the C API tests (scripts/test_capi.sh); gfortran: the Fortran API to come.
pkgs=(openmpi-bin libopenmpi-dev libclang-dev libhwloc-dev pkg-config cmake g++ gfortran "$@")
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  echo "setup: installing ${missing[*]}" >&2
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
