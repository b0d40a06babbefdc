#!/bin/bash
# bench-plot.sh DIR RELEASE [COPY-TO...]
#
# The pictures of a full `make bench` (scripts/bench.sh runs this), from
# one leg of Debian's kernel RELEASE: DIR/bench.raw ("DEV FIGURE VALUE",
# each repetition a line; the medians are drawn) and DIR/latency.raw
# ("DEV VALUE", one ib_send_lat's samples; scripts/tests/bench-guest.sh).
# Writes into DIR, and copies into each COPY-TO (docs/figures, for the
# README):
#   bandwidth.svg   WRITE and READ against message size, softhca and
#                   rdma_rxe at 1 and 4 in flight, beside kernel memcpy
#   latency.svg     the distribution (CDF) of 2-byte SEND latency
#   qp-scaling.svg  per-WRITE time, create time and kernel memory per QP
#                   against the number of QPs
# gnuplot's SVG terminal, with named fonts (none embedded) and no
# timestamp: the same figures give the same files.
set -uo pipefail
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh"

[ $# -ge 2 ] || die "usage: bench-plot.sh DIR RELEASE [COPY-TO...]"
dir=$1 rel=$2
shift 2
raw=$dir/bench.raw
[ -s "$raw" ] || die "bench-plot: no figures in $raw"
command -v gnuplot >/dev/null || die "bench-plot: no gnuplot (scripts/setup.sh installs it)"

# The day the figures were taken, and how many repetitions each median
# is of, for the titles.
day=$(date -u -r "$raw" +%F)
reps=$(awk '$1 == "softhca0" && $2 == "write_bw_65536_q4"' "$raw" | wc -l)
runs="median of $reps runs"
[ "$reps" != 1 ] || runs="one run"
subtitle="Linux $rel (Debian), QEMU TCG, $day, $runs"

# medians DEV FIGURE...: the medians of FIGUREs on DEV, "NaN" (which
# gnuplot leaves out) for one that did not come out.
medians() {
	local dev=$1 f v
	shift
	for f in "$@"; do
		v=$(median "$raw" "$dev" "$f")
		printf ' %s' "${v:-NaN}"
	done
}

# A white background, for a README shown in a dark theme; enhanced text
# off, for the underscores in names.
terminal="set terminal svg size 960,440 font 'sans,12' noenhanced background rgb 'white'"

bandwidth() {
	local s
	echo "${terminal/960,440/960,520}"
	echo "\$bw << EOD"
	echo "# size softhca write q1 q4, read q1 q4, rxe the same, memcpy"
	for s in 64 4096 65536 1048576; do
		echo "$s$(medians softhca0 "write_bw_${s}_q1" "write_bw_${s}_q4" \
			"read_bw_${s}_q1" "read_bw_${s}_q4")$(medians rxe0 \
			"write_bw_${s}_q1" "write_bw_${s}_q4" "read_bw_${s}_q1" \
			"read_bw_${s}_q4")$(medians memcpy "memcpy_$s")"
	done
	echo EOD
	cat <<-EOF
		set multiplot layout 1,2 title "Loopback bandwidth against message size: $subtitle"
		set logscale x 2
		set xtics ("64 B" 64, "4 KiB" 4096, "64 KiB" 65536, "1 MiB" 1048576)
		set logscale y 10
		set format y "%g"
		set xrange [48:1400000]
		set ylabel "MiB/s"
		set grid
		set key below maxrows 3 box
		set style line 1 lc rgb '#0060ad' lw 2 pt 7
		set style line 2 lc rgb '#0060ad' lw 1 dt 2 pt 6
		set style line 3 lc rgb '#dd181f' lw 2 pt 5
		set style line 4 lc rgb '#dd181f' lw 1 dt 2 pt 4
		set style line 5 lc rgb '#333333' lw 1.5 dt 3 pt 0
		set title "RDMA WRITE (ib_write_bw)"
		plot \$bw using 1:3 with linespoints ls 1 title "softhca, 4 in flight", \\
			'' using 1:2 with linespoints ls 2 title "softhca, 1 in flight", \\
			'' using 1:7 with linespoints ls 3 title "rdma_rxe, 4 in flight", \\
			'' using 1:6 with linespoints ls 4 title "rdma_rxe, 1 in flight", \\
			'' using 1:10 with lines ls 5 title "kernel memcpy"
		set title "RDMA READ (ib_read_bw)"
		plot \$bw using 1:5 with linespoints ls 1 title "softhca, 4 in flight", \\
			'' using 1:4 with linespoints ls 2 title "softhca, 1 in flight", \\
			'' using 1:9 with linespoints ls 3 title "rdma_rxe, 4 in flight", \\
			'' using 1:8 with linespoints ls 4 title "rdma_rxe, 1 in flight", \\
			'' using 1:10 with lines ls 5 title "kernel memcpy"
		unset multiplot
	EOF
}

# The CDF of each device's samples: VALUE and the fraction of samples at
# or under it.
latency() {
	local dev
	echo "$terminal"
	for dev in softhca0 rxe0; do
		echo "\$$dev << EOD"
		awk -v d="$dev" '$1 == d { print $2 }' "$dir/latency.raw" |
			sort -g | awk '{ v[NR] = $1 }
				END { for (i = 1; i <= NR; i++) print v[i], i / NR }'
		echo EOD
	done
	cat <<-EOF
		set title "2-byte SEND latency, every sample of one ib_send_lat per device: Linux $rel (Debian), QEMU TCG, $day"
		set logscale x 10
		set format x "%g"
		set xlabel "latency, half a round trip (us, log scale)"
		set ylabel "fraction of samples at or under"
		set yrange [0:1]
		set ytics 0.1
		set grid
		set key bottom right box opaque
		plot \$softhca0 using 1:2 with steps lc rgb '#0060ad' lw 2 title "softhca", \\
			\$rxe0 using 1:2 with steps lc rgb '#dd181f' lw 2 title "rdma_rxe"
	EOF
}

scaling() {
	local n
	echo "${terminal/960,440/960,480}"
	echo "\$qp << EOD"
	echo "# QPs softhca op_ns create_us kib, rxe the same"
	for n in 1 100 1000 10000; do
		echo "$n$(medians softhca0 "scale_op_ns_$n" "scale_create_us_$n" \
			"scale_kib_$n")$(medians rxe0 "scale_op_ns_$n" \
			"scale_create_us_$n" "scale_kib_$n")"
	done
	echo EOD
	cat <<-EOF
		set multiplot layout 1,3 title "RC QPs 256 deep (userspace/tests/qp-scale): $subtitle"
		set logscale x 10
		set xtics ("1" 1, "10" 10, "100" 100, "1k" 1000, "10k" 10000)
		set xrange [0.5:20000]
		set xlabel "QPs"
		set yrange [0:*]
		set grid
		set key below horizontal box
		set bmargin 5
		set style line 1 lc rgb '#0060ad' lw 2 pt 7
		set style line 3 lc rgb '#dd181f' lw 2 pt 5
		set title "8-byte WRITE spread over all QPs"
		set ylabel "us per WRITE"
		plot \$qp using 1:(\$2 / 1000) with linespoints ls 1 title "softhca", \\
			'' using 1:(\$5 / 1000) with linespoints ls 3 title "rdma_rxe"
		set title "creating and connecting one QP"
		set ylabel "us per QP"
		plot \$qp using 1:3 with linespoints ls 1 title "softhca", \\
			'' using 1:6 with linespoints ls 3 title "rdma_rxe"
		set title "kernel memory one QP takes"
		set ylabel "KiB per QP"
		plot \$qp using 1:4 with linespoints ls 1 title "softhca", \\
			'' using 1:7 with linespoints ls 3 title "rdma_rxe"
		unset multiplot
	EOF
}

# draw NAME [COPY-TO...]: DIR/NAME.svg from the gnuplot script on stdin,
# copied into each COPY-TO.
draw() {
	local name=$1 to
	shift
	gnuplot >"$dir/$name.svg.tmp" || return 1
	mv "$dir/$name.svg.tmp" "$dir/$name.svg"
	for to in "$@"; do
		mkdir -p "$to" && cp "$dir/$name.svg" "$to/" || return 1
	done
	say "bench-plot: $dir/$name.svg${*:+, copied into $*}"
}

ok=0
bandwidth | draw bandwidth "$@" || ok=1
if [ -s "$dir/latency.raw" ]; then
	latency | draw latency "$@" || ok=1
else
	say "bench-plot: no latency samples in $dir/latency.raw"
	ok=1
fi
scaling | draw qp-scaling "$@" || ok=1
[ $ok = 0 ] || say "bench-plot: pictures missing; see above"
exit $ok
