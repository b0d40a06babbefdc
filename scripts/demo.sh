#!/bin/bash
# `make demo`: install what is missing, build softhca and its provider,
# boot Debian's kernel in QEMU, bind softhca to a veth there and show the
# device as libibverbs sees it.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

"$top/scripts/setup.sh"
kdir=$(make -s -C "$top" print-kdir)
rel=$(kdir_release "$kdir")
make -s -C "$top" KDIR="$kdir" modules userspace >/dev/null
kernel=$("$top/scripts/kernel/debian-kernel.sh" "$rel")

share=$(run_dir demo)
export SOFTHCA_SHARE=$share
"$top/scripts/vm/run.sh" --timeout 300 --share "$share" \
	--log "$share/console.log" "$kernel" -- \
	"$top/scripts/tests/demo-guest.sh" "$top/build/$rel" \
	"$top/build/userspace/libsofthca" >/dev/null || {
	cat "$share/demo.out" 2>/dev/null
	die "demo failed; console log in $share/console.log"
}
cat "$share/demo.out"
