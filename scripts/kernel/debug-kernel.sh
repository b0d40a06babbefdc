#!/bin/bash
# Build the debug kernel (KUnit, lockdep, KASAN, kmemleak, ...) from Debian's
# linux-source-6.1 with debug.config, or find it in the cache.  Prints the
# cache directory; it holds bzImage, the build tree (for out-of-tree
# modules), the installed modules and the unpacked source.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"

frag=$top/scripts/kernel/debug.config
srcpkg=linux-source-6.1
srctar=/usr/src/$srcpkg.tar.xz
[ -f "$srctar" ] || die "$srctar missing (apt-get install $srcpkg)"

srcver=$(dpkg-query -W -f='${Version}' $srcpkg)
key=$({ cat "$frag"; echo "$srcver"; gcc --version | head -n1; } |
	sha256sum | cut -c1-16)
out=$cache/debug-kernel-$key

build() {
	[ -f "$out/done" ] && return 0
	# Built in place: the build tree records absolute paths.
	rm -rf "$out"
	mkdir -p "$out"
	say "debug kernel: cold build of $srcpkg $srcver into $out (~25 min on 2 cores)"
	tar -C "$out" -xJf "$srctar"
	mv "$out/$srcpkg" "$out/src"
	make -s -C "$out/src" O="$out/build" allnoconfig \
		KCONFIG_ALLCONFIG="$frag"
	check_config "$out/build/.config"
	make -s -C "$out/build" -j"$(nproc)" bzImage modules
	make -s -C "$out/build" modules_install INSTALL_MOD_PATH="$out/root" \
		INSTALL_MOD_STRIP=1
	cp "$out/build/arch/x86/boot/bzImage" "$out/bzImage"
	cp "$out/build/include/config/kernel.release" "$out/release"
	touch "$out/done"
}

# Every symbol the fragment names must have landed in .config, or the kernel
# would silently lack a checker.
check_config() {
	local cfg=$1 line sym val bad=0
	while read -r line; do
		case "$line" in '' | '#'*) continue ;; esac
		sym=${line%%=*}
		val=${line#*=}
		if [ "$val" = n ]; then
			grep -qx "$sym=.*" "$cfg" && { say "config: $sym set"; bad=1; }
		else
			grep -qx "$line" "$cfg" || { say "config: $line missing"; bad=1; }
		fi
	done <"$frag"
	[ $bad = 0 ] || die "debug.config did not apply"
}

with_lock debug-kernel build
echo "$out"
