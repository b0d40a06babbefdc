#!/bin/bash
# blktests.sh BLKTESTS [KDIR]
#
# blktests' soft-RDMA groups, nvme (NVMET_TRTYPES=rdma) and srp, on
# softhca and on rdma_rxe, from a blktests checkout (BLKTESTS; Debian
# does not package it): each device in a boot of its own of Debian's
# kernel (6.1 by default, or the one of the headers in KDIR), then a
# table of every test, softhca beside rdma_rxe.  blktests makes rdma_rxe
# links itself; scripts/tests/blktests-shim turns those into softhca
# links for softhca's run.  softhca's tests are reported as blktests/...
# (blktests-<major.minor>/... on another kernel), rdma_rxe's are in the
# table only.  TESTS="nvme" (or "nvme/003 srp/001", any ./check
# argument) runs fewer.  Exits non-zero when one of softhca's failed.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

src=${1:?usage: blktests.sh BLKTESTS [KDIR]}
if ! [ -x "$src/check" ] || ! [ -d "$src/tests/srp" ]; then
	die "$src is not a blktests checkout"
fi
read -ra tests <<<"${TESTS:-nvme srp}"
suite_kernel blktests "${2:-}"

# A copy of the checkout, built here (its helpers in src/), so that the
# checkout itself is left as it was.
bt=$top/build/blktests
rm -rf "$bt"
cp -a "$src" "$bt" || die "cannot copy $src"
rm -rf "$bt/results"
make -s -C "$bt" >"$top/build/blktests.make.log" 2>&1 ||
	die "blktests does not build: $top/build/blktests.make.log"

# boot DEVICE: blktests over DEVICE in a boot of its own.  blktests reads
# the kernel's options from /boot, which is the host's in the guest.
boot() {
	softhca_guest "blktests-$1" 7200 "$top/scripts/tests/blktests-guest.sh" \
		"$1" "$bt" "$kernel/root/boot/config-$rel" "${tests[@]}"
}
boot softhca
dir_softhca=$share rc_softhca=$rc
boot rxe
dir_rxe=$share rc_rxe=$rc

# The table: one row per test either run knows of.
status_of() {
	awk -v t="$2" '$2 == "blktests/" t { print $1 }' "$1/results" 2>/dev/null
}
printf '%-12s %-8s %-8s\n' test softhca rdma_rxe
sort -u <(awk '$2 ~ /^blktests\// { sub("blktests/", "", $2); print $2 }' \
	"$dir_softhca/results" "$dir_rxe/results" 2>/dev/null) |
	while read -r t; do
		printf '%-12s %-8s %-8s\n' "$t" \
			"$(status_of "$dir_softhca" "$t")" "$(status_of "$dir_rxe" "$t")"
	done
say "blktests' logs: $dir_softhca/blktests-softhca, $dir_rxe/blktests-rxe"
[ "$rc_rxe" = 0 ] || say "rdma_rxe's boot: harness exit $rc_rxe"

# softhca's results, counted.
guest_verdict blktests "$rc_softhca" "$dir_softhca" >"$dir_softhca/verdict"
cat "$dir_softhca/verdict"
awk '{ n[$1]++ } END { printf "%d passed, %d failed, %d skipped\n",
	n["PASS"], n["FAIL"], n["SKIP"]; exit n["FAIL"] > 0 }' \
	"$dir_softhca/verdict"
