#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Link-level checks of the built provider against the installed libibverbs:
#  - every symbol it imports resolves (ldd -r),
#  - it imports libibverbs' private symbols under IBVERBS_PRIVATE_34 and the
#    installed libibverbs.so.1 defines each of them with that version,
#  - it exports nothing (libibverbs only needs its constructor).
#
# Usage: check-symbols.sh path/to/libsofthca-rdmav34.so

set -u

lib=${1:?usage: $0 libsofthca-rdmav34.so}
pabi=IBVERBS_PRIVATE_34
fail=0

ok() { echo "ok:   $*"; }
bad() { echo "FAIL: $*"; fail=1; }

for tool in ldd objdump awk; do
	command -v "$tool" >/dev/null 2>&1 || { echo "FAIL: $tool not found"; exit 1; }
done
[ -f "$lib" ] || { echo "FAIL: $lib does not exist"; exit 1; }

# Resolve libibverbs.so.1 the way the dynamic linker will for this object.
ibverbs=$(ldd "$lib" | awk '$1 == "libibverbs.so.1" { print $3 }')
if [ -z "$ibverbs" ] || [ ! -f "$ibverbs" ]; then
	bad "libibverbs.so.1 not found by ldd $lib"
	exit 1
fi
ok "links against $ibverbs"

undef=$(ldd -r "$lib" 2>&1 | grep -i 'undefined symbol\|version .* not found')
if [ -n "$undef" ]; then
	bad "unresolved references:"
	echo "$undef"
else
	ok "ldd -r: every reference resolves"
fi

# objdump -T columns: addr flags... section [align] (version) name
imports=$(objdump -T "$lib" | awk -v v="($pabi)" '$0 ~ /\*UND\*/ && $(NF-1) == v { print $NF }' | sort)
if [ -z "$imports" ]; then
	bad "no $pabi imports found (was it linked with -libverbs?)"
fi
defs=$(objdump -T "$ibverbs" | awk -v v="$pabi" '/^[0-9a-f]+ / && $0 !~ /\*UND\*/ && $(NF-1) == v { print $NF }' | sort)
for sym in $imports; do
	if echo "$defs" | grep -qx "$sym"; then
		ok "$sym@$pabi defined by $(basename "$ibverbs")"
	else
		bad "$sym@$pabi not defined by $ibverbs"
	fi
done

# Any libibverbs import must carry a version; an unversioned one would bind
# to whatever a future libibverbs happens to provide under that name.
unversioned=$(objdump -T "$lib" | awk '$0 ~ /\*UND\*/ && $(NF-1) !~ /^\(/ && $NF !~ /^(_ITM_|__gmon_start__|__cxa_finalize)/ { print $NF }')
if [ -n "$unversioned" ]; then
	bad "unversioned imports: $unversioned"
else
	ok "all imports are versioned"
fi

exports=$(objdump -T "$lib" | awk '/^[0-9a-f]+ / && $0 !~ /\*UND\*/ { print $NF }')
if [ -n "$exports" ]; then
	bad "unexpected exports: $exports"
else
	ok "exports no symbols"
fi

# The constructor is what registers the provider.
if readelf -dW "$lib" | grep -q '(INIT_ARRAY)'; then
	ok "has a constructor (INIT_ARRAY)"
else
	bad "no INIT_ARRAY: provider would never register"
fi

[ $fail -eq 0 ] && echo "check-symbols: PASSED" || echo "check-symbols: FAILED"
exit $fail
