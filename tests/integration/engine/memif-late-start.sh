#!/usr/bin/env bash
# A memif client whose server is not ready for it yet comes up once the
# server is, within its link-timeout, instead of waiting it out or bringing
# the server down (libusiw/port.c):
#   late-start   the server's socket listens but its port starts 1.5 s
#                later (a server still making its pools; both sides of an
#                MPI launch start at once);
#   slow-accept  the server's port has started but its process is stopped
#                for 1 s (a loaded machine), so the client's connection
#                waits to be accepted.  A client that gave it up meanwhile
#                to connect anew left memif's server a connection already
#                closed to accept, and the hello it sent failed (EPIPE):
#                DPDK 22.11's memif then closes that socket while its
#                interrupt callback stays registered, and EAL's interrupt
#                thread panics (seen once in CI: MPI's ranks beside the
#                impair forwarder under the sanitizers).
#   memif-late-start.sh late-start|slow-accept LATE-START-PROGRAM USIW-RUN IBV-DEVINFO
set -uo pipefail
mode=$1 late=$2 usiw_run=$3 devinfo=$4
case $mode in
late-start) delay_ms=1500 ;;
slow-accept) delay_ms=0 ;;
*) echo "memif-late-start.sh: unknown mode '$mode'" >&2; exit 2 ;;
esac
tmp=$(mktemp -d /tmp/usiw-late.XXXXXX)
prefix=usiw-late-${tmp##*.}
server_pid=
trap '[[ -n $server_pid ]] && kill -KILL "$server_pid" 2>/dev/null; rm -rf "$tmp" /var/run/dpdk/"$prefix"-*' EXIT

"$late" "$delay_ms" 20 --no-pci --no-huge -m 128 --file-prefix "$prefix-s" --log-level=error \
	--vdev "net_memif0,role=server,socket=$tmp/m.sock,socket-abstract=no" >"$tmp/server.out" 2>&1 &
server_pid=$!
ready() {   # late-start: the socket listens; slow-accept: the port has started
	if [[ $mode == slow-accept ]]; then
		grep -q 'port started' "$tmp/server.out"
	else
		grep -q " $tmp/m.sock\$" /proc/net/unix
	fi
}
for ((i = 0; i < 500; i++)); do
	ready && break
	sleep 0.02
done
if ! ready; then
	cat "$tmp/server.out"
	echo "FAIL ($mode): the server was not ready within 10 s"
	exit 1
fi
if [[ $mode == slow-accept ]]; then
	kill -STOP "$server_pid"
	(sleep 1; kill -CONT "$server_pid") &
fi

cat >"$tmp/client.conf" <<CONF
[eal]
args = --no-pci --no-huge -m 128 --file-prefix $prefix-c
[port]
device = net_memif0,role=client,socket=$tmp/m.sock,socket-abstract=no
ipv4 = 10.77.0.2/24
link-timeout = 8
CONF
out=$(timeout 30 "$usiw_run" -c "$tmp/client.conf" -- "$devinfo" -d usiw0 2>&1)
client_rc=$?
wait "$server_pid"
server_rc=$?
server_pid=

cat "$tmp/server.out"
if ((client_rc != 0)) || ! grep -q PORT_ACTIVE <<<"$out"; then
	echo "FAIL: the client's device did not come up (exit $client_rc):"
	echo "$out" | sed 's/^/    /'
	exit 1
fi
if ((server_rc != 0)); then
	echo "FAIL: the server saw no client come and go (exit $server_rc)"
	exit 1
fi
echo "ok ($mode): the client came up once the server was ready"
