#!/usr/bin/env bash
# Puts Debian 12's own distro kernel where `rocehil testbed up --vm` boots its guests from:
# /var/cache/rocehil/guest-kernel/VERSION/{boot/vmlinuz-VERSION,lib/modules/VERSION}.
# The package is downloaded and unpacked, never installed: this machine's kernel is not touched.
# Idempotent: a complete cache (its .complete marker written last) is left as it is.
# Usage: guest-kernel.sh [CACHE_DIR]
set -euo pipefail

cache=${1:-/var/cache/rocehil/guest-kernel}

# The ABI package the meta package depends on (linux-image-6.1.0-NN-amd64): the kernel a fresh
# Debian 12 install runs.
abi_package() {
  apt-cache depends linux-image-amd64 2>/dev/null |
    sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*-amd64\)$/\1/p' | head -n 1
}
package=$(abi_package)
if [ -z "$package" ] && [ "$(id -u)" -eq 0 ]; then
  apt-get update -q >/dev/null  # a fresh image has no package lists yet
  package=$(abi_package)
fi
if [ -z "$package" ]; then
  echo "guest-kernel: apt knows no linux-image-amd64; run 'apt-get update' (Debian 12 sources)" >&2
  exit 2
fi
version=${package#linux-image-}
target=$cache/$version

if [ -f "$target/.complete" ]; then
  echo "guest-kernel: $version present in $target"
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "guest-kernel: $version is not in $cache; run as root (sudo $0) to fetch it" >&2
  exit 2
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/rocehil-guest-kernel.XXXXXX")
trap 'rm -rf "$work"' EXIT
chmod 0755 "$work"  # apt-get download drops to _apt, who must write there
echo "guest-kernel: downloading $package (about 70 MB) into $target"
(cd "$work" && apt-get download -q "$package")
rm -rf "$target"
mkdir -p "$target"
dpkg-deb -x "$work"/"$package"_*.deb "$target"
# The package carries no modules.dep (its postinst makes it); the guests' modprobe needs it.
depmod -b "$target" "$version"
test -f "$target/boot/vmlinuz-$version"
touch "$target/.complete"
echo "guest-kernel: $version ready in $target"
