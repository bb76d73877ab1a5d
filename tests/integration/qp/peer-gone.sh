#!/usr/bin/env bash
# A peer that dies mid-transfer: unmodified ib_write_bw streams between two
# usiw endpoints (tools/usiw-pair) until the server's perftest is killed
# (SIGKILL, so nothing of it closes its QP).  The client must neither hang
# nor lose the failure: its work request completes with retries exceeded
# (status 12, IBV_WC_RETRY_EXC_ERR), it exits non-zero within usiw-pair's
# timeout, and usiw says which connection failed and why.
#   peer-gone.sh memif|af_packet
set -euo pipefail
link=$1
pair=$(dirname "$0")/../../../tools/usiw-pair
# The server is killed this long after its measurement began (its header
# line): killed at a fixed time after its start instead, an ASan build on a
# slow host was killed while the two perftests still exchanged their QPs'
# addresses, before any transfer.
kill_after_s=1
server_log=$(mktemp)
trap 'rm -f "$server_log"' EXIT

rc=0
out=$("$pair" --link "$link" --timeout 60 \
	--server "sh -c 'stdbuf -oL ib_write_bw -s 4096 -D 30 > $server_log & p=\$!;
		while ! grep -q \"#bytes\" $server_log && kill -0 \$p 2>/dev/null; do sleep 0.1; done;
		sleep $kill_after_s; kill -KILL \$p; wait \$p; exit 0'" \
	--client "stdbuf -oL ib_write_bw -s 4096 -D 30 {server}" 2>&1) || rc=$?
status=0
fail() {
	echo "FAILED: $1" >&2
	status=1
}
if [ "$rc" -eq 124 ]; then
	fail "the client did not end after its peer died (usiw-pair timed out)"
elif [ "$rc" -eq 0 ]; then
	fail "the client exited 0 although its peer died mid-transfer"
fi
grep -Eq '^client\| +Failed status 12:' <<<"$out" ||
	fail "no work request completed with retries exceeded (status 12)"
grep -Eq '^client\| usiw: QP [0-9]+: the connection to QP [0-9]+ at 10\.77\.0\.1 failed: (retransmission limit exceeded|peer stopped answering keepalives)' <<<"$out" ||
	fail "usiw did not say which connection failed and why"
if [ "$status" -ne 0 ]; then
	echo "usiw-pair exited $rc; its output:" >&2
	echo "$out" >&2
fi
exit $status
