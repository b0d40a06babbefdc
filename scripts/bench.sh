#!/bin/bash
# bench.sh [--reps N] [--smoke] [--baseline COMMIT]
#
# `make bench`: softhca side by side with rdma_rxe in one boot of Debian's
# kernel, then with rdma_rxe and siw in one boot of the debug kernel, the
# only one here that has siw (its figures are labelled "lockdep kernel":
# lockdep, KASAN and kmemleak weigh on every device there).
# scripts/tests/bench-guest.sh measures; see there.  Kernel memcpy, in
# the same boot, is the limit of a loopback WRITE.  Prints a table per
# kernel, then one line per figure:
#   BENCH <name> softhca=<v> rxe=<v> ratio=<softhca/rxe> unit=<u> [limit=<v>]
# and for the debug kernel
#   BENCH lockdep_<name> softhca=<v> rxe=<v> siw=<v> ratio=<softhca/rxe>
#         ratio_siw=<softhca/siw> unit=<u> [limit=<v>]
# and, in the same boot of Debian's kernel, what softhca's trace events
# cost while off: ibloop's rate beside a build without them (NOTRACE=1),
#   BENCH trace_off_kernel_ops_64 on=<v> off=<v> ratio=<on/off> unit=ops/s
# Each value is the median of N repetitions (default 3).  Then RoCEv2
# between two guests of Debian's kernel over a wire (wire.sh --bench):
# softhca against itself beside rdma_rxe against itself, N repetitions
# interleaved, 5 at least, a table of the medians and lines "BENCH
# wire_<name> ...", the bandwidths' limit the wire's own rate.  Then, in
# one guest of Debian's kernel, softhca between two network namespaces
# over a veth beside softhca's loopback, 5 interleaved repetitions
# (netns.sh --bench):
# "BENCH netns_<name> ns=<v> loop=<v> ratio=<ns/loop> unit=<u>".
# The kernel's ULPs (fio over NVMe-oF, NFS over RDMA) are among the
# figures of Debian's kernel, and have a leg of their own on 6.12 when
# its headers are here: "BENCH 6.12_<name> ...".
# --smoke: the figures the performance gate names, one repetition with a
# tenth of the iterations, on Debian's kernel only (no debug kernel, no
# wire, namespace, scaling or trace figures), for `make check` (whose
# wire suites run the same tools between the same guests); passes when
# each of those figures came out for softhca and rdma_rxe.  Both kinds of
# run end with the performance gate (scripts/bench-floors), the smoke
# without the debug kernel's floors (siw's failures are reported, not
# counted).  A full run then draws the Debian kernel's figures
# (scripts/bench-plot.sh) into its leg's directory and docs/figures.
# --baseline COMMIT (make bench BASELINE=COMMIT): softhca as COMMIT built
# it, module and provider, measured in the same boot of Debian's kernel
# as a third device (base0) between softhca and rdma_rxe, every
# repetition; the Debian table gets its column and softhca's ratio to it,
# the BENCH lines "base=<v> base_ratio=<softhca/base>", so that a
# regression shows in one run.  COMMIT's tree is kept under the cache,
# keyed by the commit.
# Under TCG, absolute figures mean little; the ratios are the result.
set -uo pipefail
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh"

reps=3
smoke=
baseline=
while [ $# -gt 0 ]; do
	case $1 in
	--reps) reps=$2; shift 2 ;;
	--smoke) smoke=smoke; reps=1; shift ;;
	--baseline) baseline=$2; shift 2 ;;
	*) die "usage: bench.sh [--reps N] [--smoke] [--baseline COMMIT]" ;;
	esac
done

"$top/scripts/setup.sh" || die "setup failed"
make -s -C "$top" userspace >/dev/null || die "provider build failed"

# The baseline's tree, as git has it, and its provider.
base_tree=
if [ -n "$baseline" ]; then
	sha=$(git -C "$top" rev-parse --verify -q "$baseline^{commit}") ||
		die "bench: no commit $baseline"
	base_tree=$cache/baseline/$sha
	if [ ! -e "$base_tree/.complete" ]; then
		rm -rf "$base_tree"
		mkdir -p "$base_tree" || die "bench: no $base_tree"
		git -C "$top" archive "$sha" | tar -x -C "$base_tree" ||
			die "bench: cannot extract $baseline into $base_tree"
		touch "$base_tree/.complete"
	fi
	make -s -C "$base_tree" userspace >/dev/null ||
		die "bench: the provider of $baseline does not build"
	say "bench: baseline $baseline ($sha) in $base_tree"
fi

# leg KERNEL KDIR TYPES [ulp]: one guest run of bench-guest.sh on the
# kernel in KERNEL (built from KDIR) for the device TYPES (with "base",
# the baseline's build too), with "ulp" for the ULP figures alone; sets
# $share and $rc.
leg() {
	local kernel=$1 kdir=$2 types=$3 mode=${4:-$smoke} rel start base=()
	rel=$(kdir_release "$kdir")
	make -s -C "$top" KDIR="$kdir" modules >/dev/null ||
		die "module build for $rel failed"
	if [[ $types == *base* ]]; then
		make -s -C "$base_tree" KDIR="$kdir" modules >/dev/null ||
			die "the baseline's module build for $rel failed"
		base=("$base_tree/build/$rel" "$base_tree/build/userspace/libsofthca")
	fi
	# Without trace events, for their cost (bench-guest.sh's
	# trace_figures); not beside siw, on the debug kernel.
	[[ $types == *siw* ]] || [ -n "$mode" ] ||
		make -s -C "$top" KDIR="$kdir" NOTRACE=1 modules >/dev/null ||
		die "module build for $rel without trace events failed"
	share=$(run_dir "bench-$rel")
	start=$SECONDS
	SOFTHCA_SHARE=$share "$top/scripts/vm/run.sh" \
		--timeout $((900 + reps * 2400)) --share "$share" \
		--log "$share/console.log" "$kernel" -- \
		"$top/scripts/tests/bench-guest.sh" "$top/build/$rel" \
		"$top/build/userspace/libsofthca" "$reps" "$mode" "$types" \
		"${base[@]}" >/dev/null
	rc=$?
	say "bench ($rel): guest run took $((SECONDS - start)) s, exit $rc; logs in $share"
	[ "$rc" = 90 ] && peer_splat "$share/console.log" && rc=0
}

# peer_splat LOG: the kernel splat that failed the run (exit 90; run.sh
# has printed it) is a peer's own: no softhca (or ibloop) function is in
# the kernel log at all.  The figures are kept: rdma_rxe on the debug
# kernel has been seen to hit KASAN in rxe_mr_copy under ib_write_bw at
# 1 MiB.
peer_splat() {
	! grep -q '\[softhca\]\|\[ibloop\]\|shca_' "$1" || return 1
	say "bench: the splat above is in a peer's code, not softhca's (see $1)"
}

# The figures: name, unit, and the figure that limits it, if any: memcpy's
# in one guest, the wire's own rate (wire-guest.sh's wire_cap) between two.
# "lockdep": the debug kernel's, without the scaling and ULP figures;
# "wire": wire.sh --bench's; "ulp": the ULP figures alone.
figures() {
	local s q
	if [ "${1:-}" = ulp ]; then
		printf '%s\n' "nvme_write_128k MiB/s" "nvme_read_128k MiB/s" \
			"nvme_randread_4k IOPS" "nfs_write_1m MiB/s" \
			"nfs_read_1m MiB/s"
		return
	fi
	if [ "${1:-}" = wire ]; then
		printf '%s\n' "write_bw_65536 MiB/s wire_cap_1024" \
			"read_bw_65536 MiB/s wire_cap_1024" \
			"send_lat_2_typ us" "send_lat_2_p99 us" \
			"write_lat_2_typ us" "write_lat_2_p99 us"
		return
	fi
	{
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
		echo "write_rate_8_q4_post_send Mpps"
		echo "send_lat_2_post_send_typ us"
		echo "send_lat_2_post_send_p99 us"
	}
	echo "kernel_ops_64 ops/s"
	echo "kernel_rtt_64 us"
	[ "${1:-}" = lockdep ] && return
	for q in 1 100 1000 10000; do
		echo "scale_create_us_$q us"
		echo "scale_kib_$q KiB"
		echo "scale_op_ns_$q ns"
	done
	figures ulp
}

# ratio A B: A / B, or nothing.
ratio() {
	awk -v a="$1" -v b="$2" \
		'BEGIN { if (a != "" && b + 0 > 0) printf "%.2f", a / b }'
}

missing=0
siw_missing=
lines=()

# table RAW [lockdep | wire]: the medians of a leg, as a table on stdout;
# the BENCH lines go to $lines (a wire figure's name starts "wire_").
table() {
	local raw=$1 kind=${2:-} name unit limit_name sh rx sw lim r rs
	local prefix='' bs br limit_dev=memcpy
	if [ "$kind" = wire ]; then
		prefix=wire_ limit_dev=wire
		echo "RoCEv2 between two guests of Debian's kernel, each device against itself"
	fi
	if [ "$kind" = ulp ]; then
		prefix=6.12_
		echo "The kernel's ULPs on Debian's 6.12, each device against itself"
	fi
	if [ "$kind" = lockdep ]; then
		echo "lockdep kernel (debug kernel: lockdep, KASAN, kmemleak)"
		printf '%-18s %10s %10s %10s %7s %7s %10s  %s\n' figure softhca \
			rxe siw sh/rxe sh/siw limit unit
	elif [ -z "$kind" ] && [ -n "$baseline" ]; then
		echo "base: softhca as $baseline built it, in the same boot"
		printf '%-22s %12s %12s %8s %12s %8s %12s  %s\n' figure \
			softhca base sh/base rxe ratio limit unit
	else
		printf '%-22s %12s %12s %8s %12s  %s\n' figure softhca rxe \
			ratio limit unit
	fi
	while read -r name unit limit_name; do
		[ -z "$smoke" ] || bench_gated "$name" || continue
		sh=$(median "$raw" softhca0 "$name")
		rx=$(median "$raw" rxe0 "$name")
		lim=
		[ -z "${limit_name:-}" ] ||
			lim=$(median "$raw" "$limit_dev" "$limit_name")
		r=$(ratio "$sh" "$rx")
		[ -n "$sh" ] && [ -n "$rx" ] || missing=$((missing + 1))
		if [ -z "$kind" ] && [ -n "$baseline" ]; then
			bs=$(median "$raw" base0 "$name")
			br=$(ratio "$sh" "$bs")
			[ -n "$bs" ] || missing=$((missing + 1))
			printf '%-22s %12s %12s %8s %12s %8s %12s  %s\n' \
				"$name" "${sh:--}" "${bs:--}" "${br:--}" \
				"${rx:--}" "${r:--}" "${lim:--}" "$unit"
			lines+=("BENCH $name softhca=${sh:-none} rxe=${rx:-none} ratio=${r:-none} unit=$unit${lim:+ limit=$lim} base=${bs:-none} base_ratio=${br:-none}")
			continue
		fi
		if [ "$kind" != lockdep ]; then
			name=$prefix$name
			printf '%-22s %12s %12s %8s %12s  %s\n' "$name" \
				"${sh:--}" "${rx:--}" "${r:--}" "${lim:--}" "$unit"
			lines+=("BENCH $name softhca=${sh:-none} rxe=${rx:-none} ratio=${r:-none} unit=$unit${lim:+ limit=$lim}")
			continue
		fi
		# siw has no in-kernel figures (bench-guest.sh says why), and
		# a run of it that failed is reported, not counted: on the
		# debug kernel it is the one that fails now and then.
		sw=$(median "$raw" siw0 "$name")
		case $name in
		kernel_*) sw=${sw:-n/a} ;;
		*) [ -n "$sw" ] || siw_missing+=" $name" ;;
		esac
		rs=$(ratio "$sh" "$sw")
		printf '%-18s %10s %10s %10s %7s %7s %10s  %s\n' "$name" \
			"${sh:--}" "${rx:--}" "${sw:--}" "${r:--}" "${rs:--}" \
			"${lim:--}" "$unit"
		lines+=("BENCH lockdep_$name softhca=${sh:-none} rxe=${rx:-none} siw=${sw:-none} ratio=${r:-none} ratio_siw=${rs:-none} unit=$unit${lim:+ limit=$lim}")
	done < <(figures "$kind")
}

# netns_table RAW: netns.sh --bench's medians, the veth beside loopback.
netns_table() {
	local name unit ns lo r
	echo "softhca over a veth between two namespaces (one guest, Debian's kernel) beside its loopback"
	printf '%-22s %12s %12s %8s  %s\n' figure veth loopback ratio unit
	while read -r name unit; do
		ns=$(median "$1" softhca-ns "$name")
		lo=$(median "$1" softhca-loop "${name%_jumbo}")
		r=$(ratio "$ns" "$lo")
		[ -n "$ns" ] && [ -n "$lo" ] || missing=$((missing + 1))
		printf '%-22s %12s %12s %8s  %s\n' "$name" "${ns:--}" \
			"${lo:--}" "${r:--}" "$unit"
		lines+=("BENCH netns_$name ns=${ns:-none} loop=${lo:-none} ratio=${r:-none} unit=$unit")
	done <<-EOF
		write_bw_65536 MiB/s
		write_bw_65536_jumbo MiB/s
		write_bw_4096_q4 MiB/s
		send_lat_2_typ us
		send_lat_2_p99 us
	EOF
}

# trace_table RAW: ibloop's rate with the trace events built in (and off)
# beside softhca built without them, in the same boot.  Reported, not
# gated: under TCG one build's runs spread over 30% (62,299 to 88,287
# operations a second in five runs of 2026-12-03), ten times the 3% a
# gate would have to tell apart.
trace_table() {
	local on off r
	on=$(median "$1" softhca-trace kernel_ops_64)
	off=$(median "$1" softhca-notrace kernel_ops_64)
	r=$(ratio "$on" "$off")
	[ -n "$r" ] || missing=$((missing + 1))
	echo "softhca with its trace events off beside softhca built without them (Debian's kernel)"
	printf '%-22s %12s %12s %8s  %s\n' figure events-off no-events ratio unit
	printf '%-22s %12s %12s %8s  %s\n' kernel_ops_64 "${on:--}" \
		"${off:--}" "${r:--}" ops/s
	lines+=("BENCH trace_off_kernel_ops_64 on=${on:-none} off=${off:-none} ratio=${r:-none} unit=ops/s")
}

kdir=$(make -s -C "$top" print-kdir)
kernel=$("$top/scripts/kernel/debian-kernel.sh" "$(kdir_release "$kdir")") ||
	die "no Debian kernel"
leg "$kernel" "$kdir" "softhca ${baseline:+base }rxe"
raw_debian=$share/bench.raw rc_debian=$rc

rc_debug=0
rc_wire=0
rc_netns=0
rc_612=0
raw_612=
if [ -z "$smoke" ]; then
	dk=$("$top/scripts/kernel/debug-kernel.sh") || die "no debug kernel"
	leg "$dk" "$dk/build" "softhca rxe siw"
	raw_debug=$share/bench.raw rc_debug=$rc
	raw_wire=$share/wire.raw
	"$top/scripts/wire.sh" --bench "$raw_wire" \
		--reps "$((reps > 5 ? reps : 5))" || rc_wire=1
	raw_netns=$share/netns.raw
	"$top/scripts/netns.sh" --bench 5 "$raw_netns" || rc_netns=1
	# The ULP figures on Debian's other kernel, 6.12, when its headers
	# are here.
	kdir612=$(kdir_lts612)
	if [ -n "$kdir612" ]; then
		kernel612=$("$top/scripts/kernel/debian-kernel.sh" \
			"$(kdir_release "$kdir612")") || die "no Debian 6.12 kernel"
		leg "$kernel612" "$kdir612" "softhca rxe" ulp
		raw_612=$share/bench.raw rc_612=$rc
	fi
fi

table "$raw_debian"
echo
if [ -z "$smoke" ]; then
	trace_table "$raw_debian"
	echo
	table "$raw_debug" lockdep
	echo
	table "$raw_wire" wire
	echo
	netns_table "$raw_netns"
	if [ -n "$raw_612" ]; then
		echo
		table "$raw_612" ulp
	fi
fi
printf '%s\n' "${lines[@]}"
# The pictures of Debian's kernel (scripts/bench-plot.sh), in its leg's
# directory and in docs/figures for the README.
rc_plot=0
if [ -z "$smoke" ]; then
	"$top/scripts/bench-plot.sh" "$(dirname "$raw_debian")" \
		"$(kdir_release "$kdir")" "$top/docs/figures" || rc_plot=1
fi
[ -z "$siw_missing" ] ||
	say "bench: siw gave no figure for$siw_missing (its perftest runs failed; see the debug kernel's log)"

# gate: each ratio of scripts/bench-floors against its bound, a result
# each (bench/floor-FIGURE).  A figure that came out with no ratio fails
# too.
gate() {
	local name bound_kind bound r
	while read -r name bound_kind bound _; do
		if [ -n "$smoke" ] && [[ $name == lockdep_* ]]; then
			skip "bench/floor-$name" "the debug kernel's figures are make bench's"
			continue
		fi
		r=$(printf '%s\n' "${lines[@]}" | awk -v n="BENCH $name" \
			'index($0, n " ") == 1 { for (i = 3; i <= NF; i++)
				if ($i ~ /^ratio=/) { sub(/^ratio=/, "", $i); print $i } }')
		if ! [[ $r =~ ^[0-9.]+$ ]]; then
			fail "bench/floor-$name" "no ratio (${r:-no figure})"
		elif awk -v r="$r" -v b="$bound" -v k="$bound_kind" \
			'BEGIN { exit !(k == "min" ? r >= b : r <= b) }'; then
			pass "bench/floor-$name" "ratio $r, $bound_kind $bound"
		else
			fail "bench/floor-$name" "ratio $r, $bound_kind $bound: a regression against rdma_rxe, or a very busy host"
		fi
	done < <(sed 's/#.*//' "$top/scripts/bench-floors" | awk 'NF')
}

ok=0
[ "$rc_debian" = 0 ] && [ "$rc_debug" = 0 ] && [ "$missing" = 0 ] &&
	[ "$rc_wire" = 0 ] && [ "$rc_netns" = 0 ] && [ "$rc_612" = 0 ] &&
	[ "$rc_plot" = 0 ] ||
	ok=1
if [ -n "$smoke" ]; then
	if [ $ok = 0 ]; then
		pass bench/smoke
	else
		fail bench/smoke "harness exits $rc_debian, $missing figures" \
			"missing; see the logs above"
	fi
fi
gate
exit $ok
