#!/usr/bin/env bash
# Bad setups must fail fast (well within their bound) with a message that
# says what is wrong: a missing configuration, a bad key, a bad
# USIW_CLOCK_SLOWDOWN, socket paths too long for a socket (memif's, EAL's
# telemetry socket), a memif socket already in use, a memif client whose
# server is not there, an af_packet port on an interface that is not there,
# is no Ethernet interface or has a smaller MTU, a peer that never answers
# ARP, hugepages wanted but none reserved.  (A memif server without a client
# is no bad setup: its port is up as soon as its socket listens, and its
# client may come later.)
#   bad-setups.sh PINGPONG
set -uo pipefail
pingpong=$1
tmp=$(mktemp -d /tmp/usiw-bad.XXXXXX)
pids=()
ns=usiw-bad-${tmp##*.}
trap 'for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done; ip netns del "$ns" 2>/dev/null; rm -rf "$tmp" /var/run/dpdk/usiw-bad-${tmp##*.}-*' EXIT
failures=0
n=0

conf() { # file prefix-suffix device [extra lines]
	local f=$1 p=$2 dev=$3
	shift 3
	{
		echo "[eal]"
		echo "args = --no-pci --no-huge -m 128 --file-prefix usiw-bad-${tmp##*.}-$p"
		echo "[port]"
		echo "device = $dev"
		echo "ipv4 = 10.77.0.$((RANDOM % 200 + 2))/24"
		[[ "$*" == *link-timeout* ]] || echo "link-timeout = 1"
		printf '%s\n' "$@"
	} >"$f"
}

# expect NAME MAX-SECONDS PATTERN COMMAND...: COMMAND must exit non-zero
# within MAX-SECONDS with PATTERN (extended regex) in its output.
expect() {
	local name=$1 max=$2 pattern=$3
	shift 3
	n=$((n + 1))
	local t0=$SECONDS out rc
	out=$(timeout $((max + 5)) "$@" 2>&1)
	rc=$?
	local took=$((SECONDS - t0))
	if ((rc == 0)); then
		echo "FAIL $name: exited 0"; failures=$((failures + 1))
	elif ((rc == 124 || took > max)); then
		echo "FAIL $name: took ${took}s (bound ${max}s)"; failures=$((failures + 1))
	elif ! grep -Eq -- "$pattern" <<<"$out"; then
		echo "FAIL $name: message does not match /$pattern/:"; echo "$out" | sed 's/^/    /'
		failures=$((failures + 1))
	else
		echo "ok   $name (${took}s): $(grep -E -- "$pattern" <<<"$out" | head -1)"
	fi
}

expect "missing config" 2 "USIW_CONFIG" env -u USIW_CONFIG "$pingpong" server
expect "config file absent" 2 "$tmp/none.conf.*No such file" \
	env USIW_CONFIG=$tmp/none.conf "$pingpong" server

conf "$tmp/badkey.conf" k "net_memif0,role=server,socket=$tmp/k.sock,socket-abstract=no" "mtu = 1500" "colour = blue"
expect "unknown key" 2 "$tmp/badkey.conf: \[port\] unknown key 'colour'" \
	env USIW_CONFIG=$tmp/badkey.conf "$pingpong" server

conf "$tmp/badval.conf" v "net_memif0,role=server,socket=$tmp/v.sock,socket-abstract=no" "mtu = jumbo"
expect "bad value" 2 "$tmp/badval.conf: \[port\] mtu = 'jumbo' is not allowed" \
	env USIW_CONFIG=$tmp/badval.conf "$pingpong" server

conf "$tmp/slow.conf" c "net_memif0,role=server,socket=$tmp/c.sock,socket-abstract=no"
expect "bad clock slowdown" 2 "USIW_CLOCK_SLOWDOWN: '0' is not a whole number from 1 to 1000" \
	env USIW_CONFIG=$tmp/slow.conf USIW_CLOCK_SLOWDOWN=0 "$pingpong" server

conf "$tmp/badmemif.conf" m "net_memif0,role=server,socket=$tmp/m.sock,socket-abstrakt=no"
expect "unknown memif argument" 2 "memif arguments must be key=value" \
	env USIW_CONFIG=$tmp/badmemif.conf "$pingpong" server

# Socket paths longer than a socket's (107 bytes): memif's, and EAL's
# telemetry socket in its runtime directory, named by --file-prefix.
long=$(printf '%0100d' 0)
conf "$tmp/longsock.conf" l "net_memif0,role=server,socket=$tmp/$long.sock,socket-abstract=no"
expect "memif socket path too long" 2 "memif socket=$tmp/$long.sock is [0-9]+ bytes long, more than a socket's path may be \(107\)" \
	env USIW_CONFIG=$tmp/longsock.conf "$pingpong" server
conf "$tmp/longprefix.conf" "$long" "net_memif0,role=server,socket=$tmp/p.sock,socket-abstract=no"
expect "EAL runtime directory too long" 2 "telemetry socket /.*/dpdk_telemetry.v2 would be [0-9]+ bytes long.*shorten --file-prefix" \
	env USIW_CONFIG=$tmp/longprefix.conf "$pingpong" server

# A client with no server.
conf "$tmp/orphan.conf" o "net_memif0,role=client,socket=$tmp/o.sock,socket-abstract=no"
expect "memif peer never connects (client)" 4 "memif peer did not connect within 1 s" \
	env USIW_CONFIG=$tmp/orphan.conf "$pingpong" client 10.77.0.1

# usiw's own memif port (libusiw/memif_port.c): an argument it does not know,
# a buffer size that would misalign frames, a client with no server, a
# socket another server listens on.
conf "$tmp/badown.conf" w "memif:role=server,socket=$tmp/w.sock,bsize=huge"
expect "usiw memif: bad argument" 2 "expected memif:role=server\|client,socket=PATH" \
	env USIW_CONFIG=$tmp/badown.conf "$pingpong" server
conf "$tmp/oddown.conf" w "memif:role=client,socket=$tmp/w.sock,bsize=9000"
expect "usiw memif: bsize not a multiple of 64" 2 "bsize=1024..65472, a multiple of 64" \
	env USIW_CONFIG=$tmp/oddown.conf "$pingpong" client 10.77.0.1
conf "$tmp/ownorphan.conf" x "memif:role=client,socket=$tmp/x.sock"
expect "usiw memif: peer never connects (client)" 4 \
	"memif peer did not connect within 1 s: no memif server is listening on $tmp/x.sock" \
	env USIW_CONFIG=$tmp/ownorphan.conf "$pingpong" client 10.77.0.1
conf "$tmp/ownfirst.conf" y "memif:role=server,socket=$tmp/y.sock"
conf "$tmp/ownsecond.conf" z "memif:role=server,socket=$tmp/y.sock"
USIW_CONFIG=$tmp/ownfirst.conf "$pingpong" server >/dev/null 2>&1 &
ownfirst=$!
for _ in $(seq 100); do grep -q " $tmp/y.sock\$" /proc/net/unix && break; sleep 0.05; done
expect "usiw memif: socket in use" 2 "memif socket $tmp/y.sock is in use by another process" \
	env USIW_CONFIG=$tmp/ownsecond.conf "$pingpong" server
kill "$ownfirst" 2>/dev/null

# usiw's own af_packet port (libusiw/packet_socket.c) on an interface that is
# not there, and on loopback, which has no Ethernet header to send.
conf "$tmp/noif.conf" i "af_packet:usiw-no-such"
expect "af_packet: no such interface" 2 "no interface usiw-no-such in this network namespace" \
	env USIW_CONFIG=$tmp/noif.conf "$pingpong" server
conf "$tmp/lo.conf" l "af_packet:lo"
expect "af_packet: not Ethernet" 2 "lo is not an Ethernet interface" \
	env USIW_CONFIG=$tmp/lo.conf "$pingpong" server
# ... and with [port] mtu above the interface's MTU, on a veth pair of its
# own in a namespace of its own.
if ip netns add "$ns" 2>/dev/null &&
	ip -n "$ns" link add bad0 mtu 1500 type veth peer name bad1 &&
	ip -n "$ns" link set bad0 up && ip -n "$ns" link set bad1 up; then
	conf "$tmp/mtu.conf" t "af_packet:bad0" "mtu = 9000"
	expect "af_packet: mtu above the interface's" 2 \
		"\[port\] mtu 9000 is larger than the MTU of bad0 \(1500\)" \
		ip netns exec "$ns" env USIW_CONFIG=$tmp/mtu.conf "$pingpong" server
else
	echo "skip af_packet: mtu above the interface's: cannot create a namespace and veth pair"
fi

# A socket in use: a first server serves it while a second one tries it.
conf "$tmp/first.conf" f "net_memif0,role=server,socket=$tmp/f.sock,socket-abstract=no"
conf "$tmp/second.conf" s "net_memif0,role=server,socket=$tmp/f.sock,socket-abstract=no"
USIW_CONFIG=$tmp/first.conf "$pingpong" server >/dev/null 2>&1 &
pids+=($!)
for _ in $(seq 100); do grep -q " $tmp/f.sock\$" /proc/net/unix && break; sleep 0.05; done
expect "memif socket in use" 2 "memif socket $tmp/f.sock is in use by another process" \
	env USIW_CONFIG=$tmp/second.conf "$pingpong" server
kill "${pids[@]}" 2>/dev/null

# Hugepages wanted (no --no-huge) but none free.
if [[ $(awk '/HugePages_Free/ {print $2}' /proc/meminfo) == 0 ]]; then
	cat >"$tmp/huge.conf" <<EOC
[eal]
args = --no-pci --in-memory
[port]
device = net_memif0,role=server,socket=$tmp/h.sock,socket-abstract=no
ipv4 = 10.77.0.1/24
EOC
	expect "no hugepages" 2 "run tools/usiw-setup.*--no-huge -m 512" \
		env USIW_CONFIG=$tmp/huge.conf "$pingpong" server
else
	echo "skip no hugepages: hugepages are reserved on this machine"
fi

# A peer that never answers ARP: a working memif pair, but the client pings an
# address nobody has.
pair=$(dirname "$(readlink -f "$0")")/../../../tools/usiw-pair
expect "peer never answers ARP" 10 "peer 10.77.0.99 did not answer ARP within 5000 ms" \
	"$pair" --direct --timeout 20 --server "$pingpong server -t 6" \
	--client "$pingpong client 10.77.0.99"

echo "$((n - failures)) of $n bad setups refused correctly"
((failures == 0))
