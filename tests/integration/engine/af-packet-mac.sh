#!/usr/bin/env bash
# An af_packet port is a kernel interface: the engine must leave it its own
# MAC and listen promiscuously on it, so that the kernel drops our frames as
# another host's instead of taking each in as its own (docs/engine.md, Port
# bring-up).  The ping-pong server looks at its interface while its engine
# holds the port; the ping-pong then has to go through, our MAC being on no
# interface.
# usage: af-packet-mac.sh PINGPONG-BINARY [USIW-PAIR-OPTION...]
# (--dpdk-af-packet: the port is DPDK's af_packet, not usiw's own)
set -euo pipefail
top=$(cd "$(dirname "$0")/../../.." && pwd)
pingpong=$1
shift
out=$(mktemp)
trap 'rm -f "$out"' EXIT

# In the server's command: its interface and MAC from the config usiw-pair
# gave it; the engine's start turns the interface promiscuous (at most 10 s).
"$top/tools/usiw-pair" --link af_packet "$@" --direct --timeout 60 \
	--server "$pingpong server -t 30 & pid=\$!;
		iface=\$(sed -n -e 's/^device = af_packet://p' \
			-e 's/^device = net_af_packet.*iface=\\([^,]*\\),.*/\\1/p' \"\$USIW_CONFIG\");
		mac=\$(sed -n 's/^mac = //p' \"\$USIW_CONFIG\");
		for i in \$(seq 40); do
			ip -d -o link show dev \"\$iface\" | grep -q 'promiscuity [1-9]' && break;
			sleep 0.25;
		done;
		{ echo \"usiw \$mac\"; ip -d -o link show dev \"\$iface\"; } > $out;
		wait \$pid" \
	--client "$pingpong client {server} -n 500"

cat "$out"
usiw_mac=$(awk '$1 == "usiw" {print $2}' "$out")
kernel_mac=$(grep -o 'link/ether [0-9a-f:]*' "$out" | awk '{print $2}')
if [[ -z $usiw_mac || -z $kernel_mac ]]; then
	echo "FAIL: no MAC read (usiw '$usiw_mac', interface '$kernel_mac')" >&2
	exit 1
fi
if [[ ${usiw_mac,,} == "${kernel_mac,,}" ]]; then
	echo "FAIL: the engine gave its MAC $usiw_mac to the kernel interface" >&2
	exit 1
fi
if ! grep -q 'promiscuity [1-9]' "$out"; then
	echo "FAIL: the interface is not in promiscuous mode" >&2
	exit 1
fi
echo "ok: the interface kept $kernel_mac and is promiscuous; usiw ($usiw_mac) exchanged datagrams"
