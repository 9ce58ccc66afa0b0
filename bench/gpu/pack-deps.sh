#!/usr/bin/env bash
# ./run gpu-check pack, on a machine with a Debian mirror: downloads the
# Debian packages the kernels' build needs and a GPU machine without a mirror
# lacks into .gpudeps/ (git ignores it; copy it to the GPU machine's
# checkout); kernels.sh unpacks them there. ISA-L is required (the RLNC CPU
# path); pkgconf finds it; stb and libsquish let the DXT quality tests
# compare. libsrtp2 is left out (it needs NSS there): test_srtp then skips
# its libsrtp interop part, as it says.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
dir="$here/.gpudeps"
mkdir -p "$dir"
cd "$dir"
rm -f ./*.deb
apt-get download libisal2 libisal-dev pkgconf pkgconf-bin libpkgconf3 \
  libstb0 libstb-dev libsquish0 libsquish-dev 2>&1 | grep -v "^W: Download is performed unsandboxed" || true
ls -l "$dir"
