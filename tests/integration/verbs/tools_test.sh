#!/usr/bin/env bash
# The unmodified ibverbs-utils programs under tools/usiw-run:
# ibv_devices lists usiw0, ibv_devinfo opens it and shows it as an iWARP
# device on Ethernet.  Arguments: the usiw configuration to use.
set -euo pipefail
config=$1
run=$(dirname "$0")/../../../tools/usiw-run
status=0

expect() {   # expect WHAT OUTPUT PATTERN
	if ! grep -Eq "$3" <<<"$2"; then
		echo "FAILED: $1: no match for '$3' in:" >&2
		echo "$2" >&2
		status=1
	fi
}

out=$("$run" -c "$config" -- ibv_devices)
expect ibv_devices "$out" '^[[:space:]]*usiw0[[:space:]]+[0-9a-f]{16}$'

out=$("$run" -c "$config" -- ibv_devinfo -v -d usiw0)
expect ibv_devinfo "$out" '^hca_id:[[:space:]]+usiw0$'
expect ibv_devinfo "$out" 'transport:[[:space:]]+iWARP \(1\)'
expect ibv_devinfo "$out" 'link_layer:[[:space:]]+Ethernet'
expect ibv_devinfo "$out" 'gid_tbl_len:[[:space:]]+2'
expect ibv_devinfo "$out" 'GID\[  0\]:[[:space:]]+0000:0000:0000:0000:0000:ffff:'

# The memif server's socket file (the configuration's socket=), made when
# ibv_devinfo opened usiw0, is gone once it exited: DPDK leaves it behind.
sock=$(sed -n 's/^device = .*socket=\([^,]*\).*/\1/p' "$config")
if [[ -z $sock ]]; then
	echo "FAILED: no socket= in $config" >&2
	status=1
elif [[ -e $sock ]]; then
	echo "FAILED: the memif socket $sock stayed after ibv_devinfo exited" >&2
	status=1
fi

# Clear failures: no configuration, and an engine that cannot start.
if out=$("$run" -c /nonexistent/usiw.conf -- true 2>&1); then
	echo "FAILED: usiw-run accepted a missing configuration" >&2
	status=1
fi
expect "usiw-run, missing config" "$out" 'no usiw configuration at /nonexistent/usiw.conf'

bad=$(mktemp)
trap 'rm -f "$bad"' EXIT
printf '[port]\ndevice = net_memif0\n' >"$bad"
if out=$("$run" -c "$bad" -- ibv_devinfo -d usiw0 2>&1); then
	echo "FAILED: ibv_devinfo opened usiw0 with a broken configuration" >&2
	status=1
fi
expect "ibv_devinfo, broken config" "$out" "usiw: cannot open usiw0: .*$bad"

exit $status
