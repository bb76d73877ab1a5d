#!/usr/bin/env bash
# USIW_CLOCK_SLOWDOWN=N makes usiw's clock run N times slower (bench/run's
# callgrind counts rely on it).  TRP measures its round-trip time with that
# clock, so a streaming QP's smoothed RTT, read through tools/usiw-stat in the
# middle of an ib_write_bw run, must read about 1000 times less with N = 1000
# than in a run with the clock at its normal rate (milliseconds here, with
# TRP's window full).  It is required to read at least 10 times less:
# the two runs see the machine at different moments, and a busy machine
# stretches a round trip from microseconds to milliseconds.
set -euo pipefail
top=$(cd "$(dirname "$0")/../../.." && pwd)
out=$(mktemp)
trap 'rm -f "$out"' EXIT

# The smoothed RTT that TRP reports with the clock slowed by $1.
srtt_ns() {
	USIW_CLOCK_SLOWDOWN=$1 "$top/tools/usiw-pair" --link memif --timeout 60 \
		--server "ib_write_bw -D 3 -s 4096" \
		--client "ib_write_bw -D 3 -s 4096 {server} & sleep 1.5;
			prefix=\$(sed -n 's/.*--file-prefix \\([^ ]*\\).*/\\1/p' \"\$USIW_CONFIG\");
			$top/tools/usiw-stat --json --prefix \"\$prefix\" > $out; wait" > /dev/null
	python3 -c '
import json, sys
qps = json.loads(sys.stdin.read())["extra"]["/usiw/qps"]
(qp,) = [v for v in qps.values() if isinstance(v, dict)]
if qp["pkts_sent"] == 0 or qp["srtt_ns"] == 0:
    sys.exit("no RTT measured: %s" % qp)
print(qp["srtt_ns"])' < "$out"
}

normal=$(srtt_ns 1)
slowed=$(srtt_ns 1000)
echo "srtt_ns: $normal with the clock at its normal rate, $slowed with it 1000x slower"
((slowed * 10 < normal))
