#!/usr/bin/env bash
# A streaming sender's round-trip estimate stays that of the link.  Most
# posts of ib_write_bw -s 64 join frames the last post left waiting, and
# take that post's clock instead of reading the TSC (libusiw/verbs/
# progress.c, post_clock).  A kept clock that was never forgotten would make
# TRP's send times ever older, and one behind a time TRP already saw could
# wrap its RTT samples: either shows as an srtt far above a memif link's
# fraction of a millisecond.  From 2 s into an 8 s run the sender's QP
# counters are asked for (tests/integration/usiw-stat-until) until they show
# 10000 packets sent: it must have sent data, have RTT samples (min RTT above 0)
# and an srtt under 20 ms.  Here it measures 0.02-0.2 ms (its frames queue
# behind each other), ~0.5 ms in the ASan build, and 84-94 ms with a kept
# clock that is never forgotten.
# usage: streaming-rtt.sh LINK
set -euo pipefail
top=$(cd "$(dirname "$0")/../../.." && pwd)
link=$1
out=$(mktemp)
trap 'rm -f "$out"' EXIT

# usiw-stat asks both processes: the sender is the one whose QP sent the
# most bytes.
"$top/tools/usiw-pair" --link "$link" --timeout 60 \
	--server "ib_write_bw -d usiw0 -F -s 64 -D 8" \
	--client "ib_write_bw -d usiw0 -F -s 64 -D 8 {server} & sleep 2;
		$top/tests/integration/usiw-stat-until $out '\"pkts_sent\": [0-9]{5}'; wait"
python3 -c '
import json, sys
procs = [json.loads(l) for l in sys.stdin if l.strip()]
qps = [v for p in procs for v in p["extra"]["/usiw/qps"].values() if isinstance(v, dict)]
qp = max(qps, key=lambda q: q["bytes_sent"])
print("sender: pkts_sent", qp["pkts_sent"], "srtt_ns", qp["srtt_ns"], "min_rtt_ns", qp["min_rtt_ns"],
      "timeouts", qp["timeouts"], "spurious", qp["spurious_timeouts"])
sys.exit(0 if qp["pkts_sent"] > 10000 and 0 < qp["min_rtt_ns"] <= qp["srtt_ns"] < 20_000_000 else 1)' < "$out"
echo "streaming-rtt $link: ok"
