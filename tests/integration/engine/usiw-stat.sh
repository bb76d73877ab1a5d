#!/usr/bin/env bash
# tools/usiw-stat reads the counters of a running usiw engine: a ping-pong
# server asks for its own counters (by its EAL file prefix, from the config
# usiw-pair gave it) while a client exercises it, and they must show
# datagrams received and sent.  Then the same for a QP's counters
# (/usiw/qps) in the middle of an ib_write_bw run, over one QP and over 40
# (more than one telemetry reply holds).  A last ask after the runs
# must find no usiw process and say so with a non-zero exit.
# usage: usiw-stat.sh PINGPONG-BINARY
set -euo pipefail
top=$(cd "$(dirname "$0")/../../.." && pwd)
pingpong=$1
out=$(mktemp)
trap 'rm -f "$out"' EXIT

check='
import json, sys
snaps = [json.loads(l) for l in sys.stdin if l.strip()]
ok = len(snaps) == 1 and all(s["stats"]["rx_datagrams"] > 0 and s["stats"]["tx_datagrams"] > 0 for s in snaps)
print("usiw-stat saw", [(s["prefix"], s["stats"]["rx_datagrams"]) for s in snaps])
sys.exit(0 if ok else 1)'

# In a command usiw-pair runs: the EAL file prefix of the config it gave.
prefix_from_config="prefix=\$(sed -n 's/.*--file-prefix \\([^ ]*\\).*/\\1/p' \"\$USIW_CONFIG\")"

# The client starts a few seconds after the server (usiw-pair waits for a TCP
# listener the ping-pong server never opens), so the server asks until its
# counters show traffic (for at most 20 s).  The server keeps serving after the
# client's goodbye (-k) until it is told to stop, so a client however fast is
# seen: its counters stay readable until the ask succeeds.
"$top/tools/usiw-pair" --link memif --direct --timeout 80 \
	--server "$pingpong server -t 50 -k & pid=\$!; sleep 0.5;
		$prefix_from_config;
		$top/tests/integration/usiw-stat-until $out '\"rx_datagrams\": [1-9]' \\
			--prefix \"\$prefix\";
		kill -TERM \$pid; wait \$pid" \
	--client "$pingpong client {server} -n 20000 -s 64"
python3 -c "$check" < "$out"

# A QP's TRP counters, asked by the ib_write_bw server from 2 s into its 8 s
# run until they show data delivered (tests/integration/usiw-stat-until):
# one connected QP that has received data and sent acknowledgements.  Once
# ib_write_bw has exited, its EAL runtime directory is gone.
"$top/tools/usiw-pair" --link memif --timeout 60 \
	--server "ib_write_bw -D 8 -s 4096 & sleep 2;
		$prefix_from_config;
		$top/tests/integration/usiw-stat-until $out '\"data_delivered\": [1-9]' \\
			--prefix \"\$prefix\"; wait;
		if [ -e /var/run/dpdk/\$prefix ]; then
			echo \"ib_write_bw left /var/run/dpdk/\$prefix behind\" >&2; exit 1;
		fi" \
	--client "ib_write_bw -D 8 -s 4096 {server}"
python3 -c '
import json, sys
qps = json.loads(sys.stdin.read())["extra"]["/usiw/qps"]
print("usiw-stat saw", qps)
(qp,) = [v for v in qps.values() if isinstance(v, dict)]
sys.exit(0 if qps["qps"] == 1 and qp["data_delivered"] > 0 and qp["pkts_sent"] > 0 else 1)' < "$out"

# More QPs than one telemetry reply holds (32): usiw-stat asks page by page
# and lists all 40 of ib_write_bw -q 40, each with data delivered.
"$top/tools/usiw-pair" --link memif --timeout 60 \
	--server "ib_write_bw -q 40 -D 8 -s 4096 & sleep 2;
		$prefix_from_config;
		$top/tests/integration/usiw-stat-until $out '\"qp_[0-9]+\"' --prefix \"\$prefix\"; wait" \
	--client "ib_write_bw -q 40 -D 8 -s 4096 {server}"
python3 -c '
import json, sys
qps = json.loads(sys.stdin.read())["extra"]["/usiw/qps"]
shown = {k: v for k, v in qps.items() if isinstance(v, dict)}
print("usiw-stat saw", len(shown), "QPs of", qps["qps"], "and", qps["qps_not_shown"], "not shown")
sys.exit(0 if qps["qps"] == 40 and len(shown) == 40 and qps["qps_not_shown"] == 0 and
         all(v["data_delivered"] > 0 for v in shown.values()) else 1)' < "$out"

# the runs are over: no usiw process is left to ask
if "$top/tools/usiw-stat" --prefix usiw-stat-test-none 2>"$out"; then
	echo "usiw-stat succeeded with no process to ask" >&2
	exit 1
fi
grep -q "no running usiw process" "$out"
echo "usiw-stat: ok"
