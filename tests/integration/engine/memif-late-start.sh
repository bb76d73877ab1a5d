#!/usr/bin/env bash
# A memif client that connects while its server's socket listens but before
# the server's port has started (a server still making its pools; both sides
# of an MPI launch start at once) comes up once that port starts, within its
# link-timeout, instead of waiting it out (libusiw/port.c).
#   memif-late-start.sh LATE-START-PROGRAM USIW-RUN IBV-DEVINFO
set -uo pipefail
late=$1 usiw_run=$2 devinfo=$3
tmp=$(mktemp -d /tmp/usiw-late.XXXXXX)
prefix=usiw-late-${tmp##*.}
server_pid=
trap '[[ -n $server_pid ]] && kill -KILL "$server_pid" 2>/dev/null; rm -rf "$tmp" /var/run/dpdk/"$prefix"-*' EXIT

"$late" 1500 20 --no-pci --no-huge -m 128 --file-prefix "$prefix-s" --log-level=error \
	--vdev "net_memif0,role=server,socket=$tmp/m.sock,socket-abstract=no" >"$tmp/server.out" 2>&1 &
server_pid=$!
for ((i = 0; i < 250; i++)); do
	grep -q " $tmp/m.sock\$" /proc/net/unix && break
	sleep 0.02
done

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
echo "ok: the client came up after the server's late start"
