#!/usr/bin/env bash
# USIW_CLOCK_SLOWDOWN=N makes usiw's clock run N times slower (bench/run's
# callgrind counts rely on it).  TRP times its round trips with that clock,
# so in an ib_write_lat ping-pong the lowest RTT sample of the QP, read
# through tools/usiw-stat in the middle of the run, must read about 100
# times less with N = 100 than with the clock at its normal rate.  It is
# required to read at least 20 times less, and more than 0: that round trip
# takes about 450 ns here, which N = 1000 would read as 0.  The lowest
# sample, not SRTT: reading the counters takes one of the 2 CPUs from a
# busy-polling side, which then stalls for a scheduler slice (milliseconds)
# just as the counters are read, and SRTT showed that stall at one read and
# not at another (CI once read 38.6 us at the normal rate and 5.4 us slowed
# 1000 times).
set -euo pipefail
top=$(cd "$(dirname "$0")/../../.." && pwd)
out=$(mktemp)
trap 'rm -f "$out"' EXIT

# The lowest RTT sample that TRP reports with the clock slowed by $1,
# asked for from 1.5 s into the run until the counters show the QP.
min_rtt_ns() {
	USIW_CLOCK_SLOWDOWN=$1 "$top/tools/usiw-pair" --link memif --timeout 60 \
		--server "ib_write_lat -D 8 -s 64" \
		--client "ib_write_lat -D 8 -s 64 {server} & sleep 1.5;
			prefix=\$(sed -n 's/.*--file-prefix \\([^ ]*\\).*/\\1/p' \"\$USIW_CONFIG\");
			$top/tests/integration/usiw-stat-until $out min_rtt_ns --prefix \"\$prefix\"; wait" > /dev/null
	python3 -c '
import json, sys
qps = json.loads(sys.stdin.read())["extra"]["/usiw/qps"]
(qp,) = [v for v in qps.values() if isinstance(v, dict)]
if qp["pkts_sent"] == 0 or qp["min_rtt_ns"] == 0:
    sys.exit("no RTT measured: %s" % qp)
print(qp["min_rtt_ns"])' < "$out"
}

normal=$(min_rtt_ns 1)
slowed=$(min_rtt_ns 100)
echo "min_rtt_ns: $normal with the clock at its normal rate, $slowed with it 100x slower"
((slowed * 20 < normal))
