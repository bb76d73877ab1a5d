#!/usr/bin/env bash
# USIW_CLOCK_SLOWDOWN=N makes usiw's clock run N times slower (bench/run's
# callgrind counts rely on it).  TRP measures its round-trip time with that
# clock, so with N = 1000 a streaming QP's smoothed RTT, read through
# tools/usiw-stat in the middle of an ib_write_bw run, must be under 1000 ns:
# any real round trip under 1 ms.  With the clock at its normal rate the same
# run measures tens to hundreds of microseconds.
set -euo pipefail
top=$(cd "$(dirname "$0")/../../.." && pwd)
out=$(mktemp)
trap 'rm -f "$out"' EXIT

USIW_CLOCK_SLOWDOWN=1000 "$top/tools/usiw-pair" --link memif --timeout 60 \
	--server "ib_write_bw -D 3 -s 4096" \
	--client "ib_write_bw -D 3 -s 4096 {server} & sleep 1.5;
		prefix=\$(sed -n 's/.*--file-prefix \\([^ ]*\\).*/\\1/p' \"\$USIW_CONFIG\");
		$top/tools/usiw-stat --json --prefix \"\$prefix\" > $out; wait"
python3 -c '
import json, sys
qps = json.loads(sys.stdin.read())["extra"]["/usiw/qps"]
(qp,) = [v for v in qps.values() if isinstance(v, dict)]
print("srtt_ns with the clock 1000x slower:", qp["srtt_ns"], "after", qp["pkts_sent"], "packets")
sys.exit(0 if qp["pkts_sent"] > 0 and 0 < qp["srtt_ns"] < 1000 else 1)' < "$out"
