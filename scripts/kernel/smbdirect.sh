#!/bin/bash
# smbdirect.sh KDIR: SMB Direct for the Debian kernel of the headers in
# KDIR: its SMB client (cifs.ko) and server (ksmbd.ko) built again from
# Debian's linux-source of the same version with CONFIG_CIFS_SMB_DIRECT
# and CONFIG_SMB_SERVER_SMBDIRECT, which Debian's kernels leave out, the
# rest of the configuration Debian's own.  Prints the directory that holds
# the two modules, cached by the source package's version.
#
# Built out of tree against KDIR, but for the ASN.1 compiler both modules
# need, which Debian's kbuild package lacks: it is built from the same
# source, into a copy of KDIR made of links.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"

kdir=${1:?usage: smbdirect.sh KDIR}
rel=$(kdir_release "$kdir")
line=$(cut -d. -f1-2 <<<"$rel")
srcpkg=linux-source-$line
srctar=/usr/src/$srcpkg.tar.xz
[ -f "$srctar" ] || die "$srctar missing (scripts/setup.sh smbdirect)"

# The source must be the kernel's own version: a module is built from it
# against the headers' structures and symbol versions.
srcver=$(dpkg-query -W -f='${Version}' "$srcpkg")
kver=$(dpkg-query -W -f='${source:Version}' "linux-headers-$rel")
[ "$srcver" = "$kver" ] ||
	die "$srcpkg is $srcver, the headers of $rel are $kver"
out=$cache/smbdirect-$rel-$srcver

build() {
	local work=$out.build src kbuild f
	[ -f "$out/done" ] && return 0
	rm -rf "$out" "$work"
	mkdir -p "$work/kdir/scripts"
	say "smbdirect: cifs.ko and ksmbd.ko with SMB Direct for $rel, from $srcpkg $srcver"
	tar -C "$work" -xJf "$srctar" "$srcpkg/fs/smb" "$srcpkg/fs/nls" \
		"$srcpkg/scripts/asn1_compiler.c" "$srcpkg/include/linux"
	src=$work/$srcpkg
	kbuild=$(readlink -f "$kdir/scripts")
	for f in "$kdir"/* "$kdir"/.config "$kdir"/.kernelvariables; do
		[ -e "$f" ] || continue
		[ "$(basename "$f")" = scripts ] ||
			ln -s "$(readlink -f "$f")" "$work/kdir/$(basename "$f")"
	done
	for f in "$kbuild"/* "$kbuild"/.[!.]*; do
		[ -e "$f" ] && ln -s "$f" "$work/kdir/scripts/$(basename "$f")"
	done
	gcc -O2 -I"$src/include" -o "$work/kdir/scripts/asn1_compiler" \
		"$src/scripts/asn1_compiler.c"
	make -s -C "$work/kdir" M="$src/fs/smb/client" \
		CONFIG_CIFS_SMB_DIRECT=y KCFLAGS=-DCONFIG_CIFS_SMB_DIRECT=1 \
		-j"$(nproc)" modules
	make -s -C "$work/kdir" M="$src/fs/smb/server" \
		CONFIG_SMB_SERVER_SMBDIRECT=y \
		KCFLAGS=-DCONFIG_SMB_SERVER_SMBDIRECT=1 -j"$(nproc)" modules
	mkdir -p "$out"
	strip --strip-debug -o "$out/cifs.ko" "$src/fs/smb/client/cifs.ko"
	strip --strip-debug -o "$out/ksmbd.ko" "$src/fs/smb/server/ksmbd.ko"
	rm -rf "$work"
	touch "$out/done"
}

with_lock "smbdirect-$rel" build
echo "$out"
