#!/bin/bash
# mkinitrd.sh OUT [MODROOT RELEASE]
# mkinitrd.sh --key
#
# Builds the harness initramfs: static busybox, scripts/vm/init as /init, and
# the modules a 9p+overlay root needs, taken from MODROOT/lib/modules/RELEASE
# (a tree depmod has been run on).  Modules built into the kernel or absent
# are skipped, so a kernel with everything built in gets a module-less image.
# The image is an uncompressed cpio: the debug kernel (allnoconfig) has no
# RD_GZIP, and every kernel unpacks a plain cpio.
# --key prints a hash of everything that goes into the image except the
# modules; callers cache images by it.
set -euo pipefail
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"

busybox=/bin/busybox
init=$top/scripts/vm/init
# Whatever of these exists as a module, in any kernel version.
wanted="virtio virtio_ring virtio_pci_legacy_dev virtio_pci_modern_dev virtio_pci
	9pnet 9pnet_virtio netfs fscache 9p overlay"

key() {
	cat "$init" "$0" "$busybox" | sha256sum | cut -c1-16
}

# The .ko paths (relative to MODROOT) to insmod, dependencies first, once each.
module_order() {
	local modroot=$1 release=$2 m
	for m in $wanted; do
		# Prints "insmod /path" per module to load, "builtin x" otherwise;
		# fails for a module this kernel does not have at all.
		modprobe -d "$modroot" -S "$release" --show-depends "$m" 2>/dev/null || true
	done | awk '$1 == "insmod" && !seen[$2]++ { print $2 }'
}

build() {
	local out=$1 modroot=${2:-} release=${3:-} stage ko
	command -v "$busybox" >/dev/null || die "$busybox missing (apt-get install busybox-static)"
	stage=$(mktemp -d)
	# shellcheck disable=SC2064 # expand now: $stage is local
	trap "rm -rf '$stage'" EXIT
	mkdir -p "$stage"/{bin,dev,proc,sys}
	# The kernel opens /dev/console before running /init; /init reopens it
	# from devtmpfs anyway, for images built without root (no mknod).
	mknod -m 600 "$stage/dev/console" c 5 1 2>/dev/null || true
	cp "$busybox" "$stage/bin/busybox"
	cp "$init" "$stage/init"
	chmod 755 "$stage/init"
	: >"$stage/modules.order"
	if [ -n "$modroot" ]; then
		module_order "$modroot" "$release" >"$stage/list"
		while read -r ko; do
			mkdir -p "$stage/$(dirname "${ko#"$modroot"}")"
			cp "$ko" "$stage/${ko#"$modroot"}"
			echo "${ko#"$modroot"}" >>"$stage/modules.order"
		done <"$stage/list"
		rm "$stage/list"
		case "$(cat "$stage/modules.order")" in *.xz | *.zst | *.gz)
			die "compressed modules in $modroot: busybox insmod cannot load them" ;;
		esac
		say "initramfs modules: $(xargs -n1 basename <"$stage/modules.order" | xargs)"
	fi
	(cd "$stage" && find . | LC_ALL=C sort | cpio --quiet -o -H newc) >"$out.tmp"
	mv "$out.tmp" "$out"
}

case "${1:-}" in
--key) key ;;
'' | -*) die "usage: mkinitrd.sh OUT [MODROOT RELEASE] | --key" ;;
*) build "$@" ;;
esac
