#!/bin/bash
# fi-bw's server goes on serving after a client that went away mid-run:
# bench/run kills a client that hangs (udp;ofi_rxd did, at 4 KiB), and the
# server's child must then end instead of waiting for that client's
# messages, as the server takes its next client only once the child is
# done.  A killed send client and a killed write client, each followed by
# a client that must complete its run.  Over tcp;ofi_rxm, not udp;ofi_rxd:
# the test is of fi-bw's server, and a run of udp;ofi_rxd's own sometimes
# hangs (the next client timed out once in CI, with no word from the
# server).  Loopback only.
#
# usage: fi-bw-client-gone.sh FI_BW
set -u

fi_bw=$1
provider='tcp;ofi_rxm'
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

# Waits up to 30 s for the server to have a child (yes) or none (no).
wait_child() {
	for _ in $(seq 300); do
		if pgrep -P "$server_pid" >/dev/null; then [[ $1 == yes ]] && return 0
		else [[ $1 == no ]] && return 0; fi
		sleep 0.1
	done
	return 1
}

for op in send write; do
	# The child of the previous client may still be ending: a child seen
	# below must be this client's.
	wait_child no || fail "the server's child of the client before the $op one did not end in 30 s"
	# Far more messages than the test's time moves: killed mid-run, once
	# the server has a child serving it and that child had a second.
	"$fi_bw" client "$provider" 127.0.0.1 "$port" "$op" 4096 100000000 64 >/dev/null 2>&1 &
	client_pid=$!
	wait_child yes || fail "the server took no $op client in 30 s"
	sleep 1
	kill -KILL "$client_pid" 2>/dev/null || fail "the $op client meant to be killed mid-run had ended"
	wait "$client_pid" 2>/dev/null
	out=$(timeout 30 "$fi_bw" client "$provider" 127.0.0.1 "$port" "$op" 1024 20000 64 2>&1)
	rc=$?
	[[ $rc -eq 0 ]] || fail "the $op client after a killed one: exit $rc: $out"
	[[ $out == *"bw_GBps="* ]] || fail "the $op client after a killed one printed no figures: $out"
	echo "ok: $op: served after a killed client: $out"
done

gone=$(grep -c "the client closed the connection before the end of its run" "$log")
[[ $gone -eq 2 ]] || fail "the server reported $gone clients gone, not 2"
echo "ok: the server ended both children of the killed clients"
