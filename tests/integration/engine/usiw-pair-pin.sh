#!/usr/bin/env bash
# tools/usiw-pair --pin runs the server on the first CPU this test may use
# and the client on the second: each side reports its own affinity, which
# must be exactly that one CPU.  Without --pin both would report them all.
# Skipped (77) with fewer than two CPUs, where --pin does nothing.
set -euo pipefail
top=$(cd "$(dirname "$0")/../../.." && pwd)

read -r first second < <(python3 -c \
	'import os; c = sorted(os.sched_getaffinity(0)); print(*c[:2]) if len(c) >= 2 else print()')
if [[ -z ${second-} ]]; then
	echo "fewer than two CPUs: --pin has nothing to do"
	exit 77
fi

out=$("$top/tools/usiw-pair" --pin --direct --timeout 30 \
	--server 'echo "cpus $(taskset -pc $$ | sed "s/.*: //")"' \
	--client 'echo "cpus $(taskset -pc $$ | sed "s/.*: //")"')
echo "$out"
server=$(sed -n 's/^server| cpus //p' <<<"$out")
client=$(sed -n 's/^client| cpus //p' <<<"$out")
if [[ $server != "$first" || $client != "$second" ]]; then
	echo "expected the server on CPU $first and the client on CPU $second," \
		"got '$server' and '$client'" >&2
	exit 1
fi
echo "server on CPU $server, client on CPU $client"
