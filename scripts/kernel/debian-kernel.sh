#!/bin/bash
# debian-kernel.sh [RELEASE]
#
# Fetches Debian's kernel RELEASE (default: the one linux-headers-amd64
# depends on, i.e. the one out-of-tree modules are built against) and makes
# it bootable by scripts/vm/run.sh, or finds it in the cache.  Prints the
# cache directory: bzImage, release, initrd (busybox + the modules a 9p root
# needs) and root/lib/modules/RELEASE (uncompressed modules, depmod run).
# Nothing is installed on the host.
set -euo pipefail
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"

default_release() {
	local hdr
	# e.g. "linux-headers-6.1.0-57-amd64 (= 6.1.192-3)"
	hdr=$(dpkg-query -W -f='${Depends}' linux-headers-amd64 2>/dev/null |
		sed 's/[ ,].*//') || true
	[ -n "$hdr" ] || die "linux-headers-amd64 is not installed; name a RELEASE"
	sed -n 's/^#define UTS_RELEASE "\(.*\)"$/\1/p' \
		"/usr/src/$hdr/include/generated/utsrelease.h"
}

release=${1:-$(default_release)}
[ -n "$release" ] || die "cannot tell the default kernel release"
pkg=linux-image-$release-unsigned
out=$cache/debian-$release

# apt drops to the _apt user for downloads, which cannot write into $cache
# below a private home; it only warns, but say so explicitly instead.
download() {
	apt-get -q -o APT::Sandbox::User=root download "$pkg" >&2
}

fetch() {
	[ -f "$out/done" ] && return 0
	rm -rf "$out"
	mkdir -p "$out/dl"
	say "debian kernel: fetching $pkg into $out"
	(cd "$out/dl" && { download || { apt-get -q update >&2 && download; }; }) ||
		die "cannot download $pkg"
	dpkg -x "$out"/dl/*.deb "$out/root"
	rm -rf "$out/dl"
	# depmod -b and the guest both look in lib/modules.
	if [ ! -d "$out/root/lib/modules" ] && [ -d "$out/root/usr/lib/modules" ]; then
		mv "$out/root/usr/lib/modules" "$out/root/lib/modules"
	fi
	[ -d "$out/root/lib/modules/$release" ] || die "$pkg has no lib/modules/$release"
	decompress_modules "$out/root/lib/modules/$release"
	depmod -b "$out/root" "$release"
	cp "$out/root/boot/vmlinuz-$release" "$out/bzImage"
	echo "$release" >"$out/release"
	touch "$out/done"
}

# Newer Debian kernels ship .ko.xz; busybox insmod in the initramfs cannot
# read those, and depmod then records the plain .ko names.
decompress_modules() {
	find "$1" -name '*.ko.xz' -exec xz -d {} +
	find "$1" -name '*.ko.zst' -exec zstd -q -d --rm {} +
	find "$1" -name '*.ko.gz' -exec gzip -d {} +
}

# The initrd depends on scripts/vm/init too: rebuild it when that changed.
make_initrd() {
	local key
	key=$("$top/scripts/vm/mkinitrd.sh" --key)
	[ "$(cat "$out/initrd.key" 2>/dev/null)" = "$key" ] && return 0
	"$top/scripts/vm/mkinitrd.sh" "$out/initrd" "$out/root" "$release"
	echo "$key" >"$out/initrd.key"
}

prepare() {
	fetch
	make_initrd
}

with_lock "debian-$release" prepare
echo "$out"
