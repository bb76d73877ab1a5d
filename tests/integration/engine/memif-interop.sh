#!/usr/bin/env bash
# usiw's own memif port (libusiw/memif_port.c) speaks memif 2.0 with DPDK's
# net_memif: a ping-pong of every size up to the MTU, each echo checked,
# between the two, each way round (our server and DPDK's client, DPDK's
# server and our client).
#   memif-interop.sh PINGPONG
set -uo pipefail
pingpong=$1
tmp=$(mktemp -d /tmp/usiw-interop.XXXXXX)
tag=${tmp##*.}
server_pid=
trap '[[ -n $server_pid ]] && kill -KILL "$server_pid" 2>/dev/null; rm -rf "$tmp" /var/run/dpdk/usiw-io-$tag-*' EXIT
failures=0

conf() { # file prefix-suffix ipv4 device
	cat >"$1" <<EOC
[eal]
args = --no-pci --no-huge -m 256 --file-prefix usiw-io-$tag-$2
[port]
device = $4
ipv4 = $3/24
mtu = 9000
link-timeout = 10
EOC
}

run() { # name server-device client-device
	local name=$1 sock=$tmp/$RANDOM.sock
	conf "$tmp/a.conf" a 10.77.0.1 "${2//SOCK/$sock}"
	conf "$tmp/b.conf" b 10.77.0.2 "${3//SOCK/$sock}"
	USIW_CONFIG=$tmp/a.conf "$pingpong" server -t 30 >"$tmp/server.log" 2>&1 &
	server_pid=$!
	for _ in $(seq 200); do grep -q " $sock\$" /proc/net/unix && break; sleep 0.05; done
	if USIW_CONFIG=$tmp/b.conf timeout 40 "$pingpong" client 10.77.0.1 -n 300 -s max \
		>"$tmp/client.log" 2>&1 && grep -q "all echoes correct" "$tmp/client.log"; then
		echo "ok   $name: $(grep 'all echoes correct' "$tmp/client.log")"
	else
		echo "FAIL $name"
		sed 's/^/  client: /' "$tmp/client.log"
		sed 's/^/  server: /' "$tmp/server.log"
		failures=$((failures + 1))
	fi
	kill "$server_pid" 2>/dev/null
	wait "$server_pid" 2>/dev/null
	server_pid=
}

dpdk_server="net_memif0,role=server,socket=SOCK,socket-abstract=no,bsize=9216"
dpdk_client="net_memif0,role=client,socket=SOCK,socket-abstract=no,bsize=9216"
run "our server, DPDK's client" "memif:role=server,socket=SOCK" "$dpdk_client"
run "DPDK's server, our client" "$dpdk_server" "memif:role=client,socket=SOCK"
((failures == 0))
