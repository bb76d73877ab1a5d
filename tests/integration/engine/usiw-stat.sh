#!/usr/bin/env bash
# tools/usiw-stat reads the counters of a running usiw engine: a ping-pong
# server asks for its own counters (by its EAL file prefix, from the config
# usiw-pair gave it) while a client exercises it, and they must show
# datagrams received and sent.  A second ask after the run must
# find no usiw process and say so with a non-zero exit.
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

# The client starts a few seconds after the server (usiw-pair waits for a TCP
# listener the ping-pong server never opens), so the server asks until its
# counters show traffic (for at most 10 s); it ends when the client says
# goodbye.  The client pings long enough to be seen (300000 pings: 3 s on an
# idle machine, 20 s with both cores loaded; the server waits up to 50 s).
"$top/tools/usiw-pair" --link memif --direct --timeout 80 \
	--server "$pingpong server -t 50 & sleep 0.5;
		prefix=\$(sed -n 's/.*--file-prefix \\([^ ]*\\).*/\\1/p' \"\$USIW_CONFIG\");
		for i in \$(seq 20); do
			$top/tools/usiw-stat --json --prefix \"\$prefix\" > $out &&
				grep -q '\"rx_datagrams\": [1-9]' $out && break;
			sleep 0.5;
		done; wait" \
	--client "$pingpong client {server} -n 300000 -s 64"
python3 -c "$check" < "$out"

# the run is over: no usiw process is left to ask
if "$top/tools/usiw-stat" --prefix usiw-stat-test-none 2>"$out"; then
	echo "usiw-stat succeeded with no process to ask" >&2
	exit 1
fi
grep -q "no running usiw process" "$out"
echo "usiw-stat: ok"
