#!/bin/bash
# bench.sh [--reps N] [--smoke]
#
# `make bench`: softhca side by side with rdma_rxe in one boot of Debian's
# kernel (scripts/tests/bench-guest.sh measures; see there), with kernel
# memcpy as the limit of a loopback WRITE.  Prints a table, then one line
# per figure:
#   BENCH <name> softhca=<v> rxe=<v> ratio=<softhca/rxe> unit=<u> [limit=<v>]
# Each value is the median of N repetitions (default 3).  --smoke: one
# repetition with a tenth of the iterations, for `make check`; passes when
# every figure came out for both devices.  Under TCG, absolute figures
# mean little; the ratios are the result.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

reps=3
smoke=
while [ $# -gt 0 ]; do
	case $1 in
	--reps) reps=$2; shift 2 ;;
	--smoke) smoke=smoke; reps=1; shift ;;
	*) die "usage: bench.sh [--reps N] [--smoke]" ;;
	esac
done

"$top/scripts/setup.sh" || die "setup failed"
kdir=$(make -s -C "$top" print-kdir)
rel=$(kdir_release "$kdir")
kernel=$("$top/scripts/kernel/debian-kernel.sh" "$rel") || die "no kernel $rel"
make -s -C "$top" KDIR="$kdir" modules >/dev/null || die "module build failed"
make -s -C "$top" userspace >/dev/null || die "provider build failed"

share=$(run_dir "bench-$rel")
start=$SECONDS
SOFTHCA_SHARE=$share "$top/scripts/vm/run.sh" --timeout $((600 + reps * 1500)) \
	--share "$share" \
	--log "$share/console.log" "$kernel" -- \
	"$top/scripts/tests/bench-guest.sh" "$top/build/$rel" \
	"$top/build/userspace/libsofthca" "$reps" "$smoke" >/dev/null
rc=$?
say "bench ($rel): guest run took $((SECONDS - start)) s; logs in $share"

# The figures: name, unit, and the memcpy figure that limits it, if any.
figures() {
	local s q
	for s in 64 4096 65536 1048576; do
		for q in 1 4; do
			echo "write_bw_${s}_q$q MiB/s memcpy_$s"
			echo "read_bw_${s}_q$q MiB/s memcpy_$s"
		done
	done
	for s in 2 4096; do
		for q in typ p99; do
			echo "send_lat_${s}_$q us"
			echo "write_lat_${s}_$q us"
		done
	done
	echo "write_rate_8_q4 Mpps"
	echo "send_rate_8_q4 Mpps"
	echo "kernel_ops_64 ops/s"
	echo "kernel_rtt_64 us"
	for q in 1 100 1000 10000; do
		echo "scale_create_us_$q us"
		echo "scale_kib_$q KiB"
		echo "scale_op_ns_$q ns"
	done
}

# median DEV FIGURE: of the repetitions in bench.raw.
median() {
	awk -v d="$1" -v f="$2" '$1 == d && $2 == f { print $3 }' \
		"$share/bench.raw" 2>/dev/null | sort -g |
		awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'
}

missing=0
printf '%-22s %12s %12s %8s %12s  %s\n' figure softhca rxe ratio limit unit
lines=()
while read -r name unit limit_name; do
	sh=$(median softhca0 "$name")
	rx=$(median rxe0 "$name")
	lim=
	[ -z "${limit_name:-}" ] || lim=$(median memcpy "$limit_name")
	ratio=$(awk -v a="$sh" -v b="$rx" \
		'BEGIN { if (a != "" && b + 0 > 0) printf "%.2f", a / b }')
	printf '%-22s %12s %12s %8s %12s  %s\n' "$name" "${sh:--}" "${rx:--}" \
		"${ratio:--}" "${lim:--}" "$unit"
	lines+=("BENCH $name softhca=${sh:-none} rxe=${rx:-none} ratio=${ratio:-none} unit=$unit${lim:+ limit=$lim}")
	[ -n "$sh" ] && [ -n "$rx" ] || missing=$((missing + 1))
done < <(figures)
printf '%s\n' "${lines[@]}"

if [ -n "$smoke" ]; then
	if [ "$rc" = 0 ] && [ "$missing" = 0 ]; then
		pass bench/smoke
	else
		fail bench/smoke "harness exit $rc, $missing figures missing; see $share"
	fi
fi
[ "$rc" = 0 ] && [ "$missing" = 0 ]
