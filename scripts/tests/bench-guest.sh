#!/bin/bash
# Guest side of scripts/bench.sh: the same figures for softhca and for
# rdma_rxe, one device at a time on the same veth (rxe binds UDP 4791 when
# its module loads), each device talking to itself; then the limit a
# loopback WRITE has, kernel memcpy.  Every repetition of every figure is
# one line of $SOFTHCA_SHARE/bench.raw: "DEV FIGURE VALUE"; the host takes
# the medians.
#
# $1: this kernel's build directory; $2: the provider library; $3:
# repetitions; $4: "smoke" for a quick pass with few iterations.
set -uo pipefail
. "$(dirname "$0")/../lib.sh"

build=$1
export RDMAV_DRIVERS=$2
# client_server and listening, as the provider's tests run perftest.
. "$(dirname "$0")/provider.sh"
reps=$3
smoke=${4:-}
raw=$SOFTHCA_SHARE/bench.raw
ibloop_ctl=/sys/kernel/debug/ibloop/run
: >"$raw"

wait_for() {
	local end=$((SECONDS + $1))
	shift
	until "$@"; do
		[ $SECONDS -lt $end ] || return 1
		sleep 0.2
	done
}

# iters N: N, or a tenth of it (at least 10) for a smoke run.
iters() {
	if [ "$smoke" = smoke ]; then
		echo $(($1 / 10 > 10 ? $1 / 10 : 10))
	else
		echo "$1"
	fi
}

# record DEV FIGURE VALUE: one repetition's value, when it is a number.
record() {
	[[ $3 =~ ^[0-9]+(\.[0-9]+)?$ ]] && echo "$1 $2 $3" >>"$raw"
}

# perf DEV FIGURE COLUMN TOOL ARG...: one perftest run between the
# device and itself; records the client's COLUMN of the figures' line
# (bw: 4 = BW average, 5 = MsgRate; lat: 5 = typical, 8 = 99th percentile;
# COLUMN may be two, "5,8", for FIGURE_typ and FIGURE_p99).
perf() {
	local dev=$1 figure=$2 cols=$3 tool=$4 log line
	shift 4
	log=$(mktemp)
	# A failed clock calibration (see provider.sh's perftest) shows as
	# "Can't produce a report", or as inf and nan figures: run again.
	for _ in 1 2 3; do
		client_server 18516 "$log" "$tool" -d "$dev" -x 1 -p 18516 \
			"$@" >/dev/null
		line=$(awk 'h && NF { print; exit } /#bytes/ { h = 1 }' \
			"$log.client")
		! grep -q "Can't produce a report" "$log.server" "$log.client" &&
			! grep -qw 'inf\|-\?nan' <<<"$line" && break
		line=
	done
	echo "$dev $figure: $line"
	case $cols in
	5,8)
		record "$dev" "${figure}_typ" "$(awk '{ print $5 }' <<<"$line")"
		record "$dev" "${figure}_p99" "$(awk '{ print $8 }' <<<"$line")"
		;;
	*)
		record "$dev" "$figure" "$(awk -v c="$cols" '{ print $c }' <<<"$line")"
		;;
	esac
	rm -f "$log" "$log.server" "$log.client"
}

# ibloop_field LINE KEY: the value of KEY= in a line of key=value pairs.
ibloop_field() {
	tr ' ' '\n' <<<"$1" | sed -n "s/^$2=//p"
}

ibloop() {
	echo "$1" >"$ibloop_ctl" && cat "$ibloop_ctl"
}

# The in-kernel client, busy-polling: 64-byte WRITEs with 16 in flight
# (operations per second), and one at a time (the round trip, in us).
kernel_figures() {
	local dev=$1 line
	line=$(ibloop "dev=$dev op=write size=64 depth=16 mode=poll iters=$(iters 20000)")
	echo "$dev kernel: $line"
	record "$dev" kernel_ops_64 "$(ibloop_field "$line" msgs_per_s)"
	line=$(ibloop "dev=$dev op=write size=64 depth=1 mode=poll iters=$(iters 5000)")
	echo "$dev kernel: $line"
	record "$dev" kernel_rtt_64 "$(awk -v ns="$(ibloop_field "$line" ns)" \
		-v n="$(ibloop_field "$line" completed)" \
		'BEGIN { if (n) printf "%.2f", ns / n / 1000 }')"
}

# Scaling: N RC QPs 256 deep (userspace/tests/qp-scale): the time to
# create and connect one, the kernel memory one takes, and the cost of an
# 8-byte WRITE spread over all N.
scale_figures() {
	local dev=$1 n line
	for n in 1 100 1000 10000; do
		line=$(timeout 600 "$(dirname "$RDMAV_DRIVERS")/tests/qp-scale" \
			"$dev" 1 $n "$(iters 20000)")
		echo "$dev scale: $line"
		record "$dev" "scale_create_us_$n" "$(ibloop_field "$line" create_us)"
		record "$dev" "scale_kib_$n" "$(ibloop_field "$line" kib)"
		record "$dev" "scale_op_ns_$n" "$(ibloop_field "$line" op_ns)"
	done
}

figures() {
	local dev=$1 s q n
	for s in 64 4096 65536 1048576; do
		case $s in
		64 | 4096) n=$(iters 5000) ;;
		65536) n=$(iters 1000) ;;
		*) n=$(iters 100) ;;
		esac
		for q in 1 4; do
			perf "$dev" "write_bw_${s}_q$q" 4 ib_write_bw -s $s -q $q -n "$n"
			perf "$dev" "read_bw_${s}_q$q" 4 ib_read_bw -s $s -q $q -n "$n"
		done
	done
	for s in 2 4096; do
		perf "$dev" "send_lat_$s" 5,8 ib_send_lat -s $s -n "$(iters 1000)"
		perf "$dev" "write_lat_$s" 5,8 ib_write_lat -s $s -n "$(iters 1000)"
	done
	perf "$dev" write_rate_8_q4 5 ib_write_bw -s 8 -q 4 -n "$(iters 5000)"
	perf "$dev" send_rate_8_q4 5 ib_send_bw -s 8 -q 4 -n "$(iters 5000)"
	kernel_figures "$dev"
	scale_figures "$dev"
}

gid_ready() {
	grep -qx "0000:0000:0000:0000:0000:ffff:c000:0201" \
		"/sys/class/infiniband/$1/ports/1/gids/1" 2>/dev/null
}

# device NAME TYPE: NAME of TYPE on the veth, with its IPv4 GID.
device() {
	rdma link add "$1" type "$2" netdev shv0 && wait_for 20 gid_ready "$1"
}

ip link add shv0 type veth peer name shv1 &&
	ip link set shv0 up && ip link set shv1 up &&
	ip addr add 192.0.2.1/24 dev shv0 && ip link set lo up ||
	echo "bench: no veth"
modprobe ib_uverbs
insmod "$build/drivers/ibloop/ibloop.ko" || echo "bench: no ibloop"

for rep in $(seq "$reps"); do
	echo "bench: repetition $rep of $reps"
	insmod "$build/drivers/softhca/softhca.ko" && device softhca0 softhca &&
		figures softhca0
	rdma link delete softhca0
	rmmod softhca
	modprobe rdma_rxe && device rxe0 rxe && figures rxe0
	rdma link delete rxe0
	rmmod rdma_rxe
	for s in 64 4096 65536 1048576; do
		line=$(ibloop "op=memcpy size=$s depth=16 iters=$(iters $((s < 65536 ? 200000 : 2000)))")
		echo "memcpy: $line"
		record memcpy "memcpy_$s" "$(awk -v m="$(ibloop_field "$line" mbps)" \
			'BEGIN { printf "%.2f", m * 1000000 / 1048576 }')"
	done
done
rmmod ibloop
