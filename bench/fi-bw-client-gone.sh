#!/bin/bash
# fi-bw's server goes on serving after a client that went away mid-run:
# bench/run kills a client that hangs (udp;ofi_rxd did, at 4 KiB), and the
# server's child must then end instead of waiting for that client's
# messages, as the server takes its next client only once the child is
# done.  A killed send client and a killed write client, each followed by
# a client that must complete its run.  Loopback only.
#
# usage: fi-bw-client-gone.sh FI_BW
set -u

fi_bw=$1
provider='udp;ofi_rxd'
port=$((20000 + RANDOM % 20000))
log=$(mktemp)
server_pid=

cleanup() {
	# The server's children too: one left waiting is what this tests for.
	[[ -n $server_pid ]] && pkill -KILL -P "$server_pid" 2>/dev/null
	[[ -n $server_pid ]] && kill "$server_pid" 2>/dev/null
	wait 2>/dev/null
	rm -f "$log"
}
trap cleanup EXIT

fail() {
	echo "FAIL: $*"
	echo "--- server's output:"
	cat "$log"
	exit 1
}

"$fi_bw" server "$provider" 127.0.0.1 "$port" >"$log" 2>&1 &
server_pid=$!
for _ in $(seq 100); do
	ss -ltn "sport = :$port" | grep -q LISTEN && break
	sleep 0.1
done
ss -ltn "sport = :$port" | grep -q LISTEN || fail "the server does not listen on port $port"

for op in send write; do
	# Far more messages than 3 s move: the client is killed mid-run, after
	# it connected even in a sanitizer build.
	timeout -s KILL 3 "$fi_bw" client "$provider" 127.0.0.1 "$port" "$op" 4096 100000000 64 >/dev/null 2>&1
	rc=$?
	[[ $rc -eq 137 ]] || fail "the $op client meant to be killed mid-run ended with $rc"
	out=$(timeout 30 "$fi_bw" client "$provider" 127.0.0.1 "$port" "$op" 1024 20000 64 2>&1)
	rc=$?
	[[ $rc -eq 0 ]] || fail "the $op client after a killed one: exit $rc: $out"
	[[ $out == *"bw_GBps="* ]] || fail "the $op client after a killed one printed no figures: $out"
	echo "ok: $op: served after a killed client: $out"
done

gone=$(grep -c "the client closed the connection before the end of its run" "$log")
[[ $gone -eq 2 ]] || fail "the server reported $gone clients gone, not 2"
echo "ok: the server ended both children of the killed clients"
