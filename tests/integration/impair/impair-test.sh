#!/usr/bin/env bash
# usiw-udp-pingpong through tools/usiw-pair --impair (tools/usiw-impair between
# the two endpoints), checking both the pingpong's outcome and that the
# forwarder really impaired the link (its counters, printed as 'impair| ').
#   impair-test.sh lossy LINK PINGPONG       loss, dup, reorder, corruption:
#                                            every echo correct after resends
#   impair-test.sh partition LINK PINGPONG   a 300 ms cut: the pingpong recovers
#   impair-test.sh corrupt-fix PINGPONG      with the UDP checksum recomputed,
#                                            corruption reaches the application
#   impair-test.sh bad-spec                  usiw-pair refuses a bad SPEC (exit 2)
# USIW_BUILD_DIR names the build holding tools/usiw-impair.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
pair=$here/../../../tools/usiw-pair
mode=$1
shift

fail() {
	echo "FAIL: $*"
	exit 1
}

# total FIELD: the forwarder's FIELD counter summed over both directions.
total() {
	awk -v f="$1" '/^impair\| usiw-impair: port/ {
		for (i = 1; i < NF; i++) if ($i == f) sum += $(i + 1)
	} END { print sum + 0 }' <<<"$out"
}

# run LINK SPEC PINGPONG CLIENT-ARGS: the pair's output in $out, status in $rc.
run() {
	local link=$1 spec=$2 pingpong=$3 client_args=$4
	out=$("$pair" --link "$link" --direct --timeout 100 --impair "$spec" \
		--server "$pingpong server -t 80" \
		--client "$pingpong client {server} $client_args" 2>&1)
	rc=$?
	printf '%s\n' "$out"
	((rc != 77)) || exit 77
}

# resends PINGS: datagrams the client sent beyond PINGS distinct pings (its
# own count of resends leaves out the 200 warm-up pings of
# usiw-udp-pingpong.c, which a cut may hit).
resends() {
	grep -q '^client| client: all echoes correct' <<<"$out" || return
	local sent
	sent=$(sed -n 's/^client| client: stats .* datagrams rx [0-9]* tx \([0-9]*\),.*/\1/p' <<<"$out")
	[[ -n $sent ]] && echo $((sent - $1))
}

case $mode in
lossy)
	# The pingpong has no integrity check of its own: udp_csum=keep leaves
	# corrupted datagrams with a stale UDP checksum, which the receiving
	# engine drops (bad-cksum), and the pingpong resends.
	run "$1" loss=0.05,dup=0.02,reorder=0.02,corrupt=0.01,udp_csum=keep,seed=3 "$2" \
		"-n 100 -s 64,1472"
	((rc == 0)) || fail "usiw-pair exited $rc"
	n=$(resends $((200 + 2 * 100 + 1)))
	[[ -n $n ]] && ((n > 0)) || fail "the pingpong did not resend"
	for counter in lost duplicated reordered corrupted; do
		(($(total "$counter") > 0)) || fail "the forwarder counted no packet $counter"
	done
	bad=$(sed -n 's/.*bad-cksum \([0-9]*\).*/\1/p' <<<"$out" | awk '{ s += $1 } END { print s + 0 }')
	((bad == $(total corrupted))) ||
		fail "the endpoints dropped $bad bad checksums, the forwarder corrupted $(total corrupted)"
	echo "PASS: $n resends; forwarder: lost $(total lost), duplicated $(total duplicated)," \
		"reordered $(total reordered), corrupted $(total corrupted) (= bad-cksum drops)"
	;;
partition)
	# The cut starts 200 ms after the first IPv4 frame (the first ping);
	# at 50 us each way (100 us a round trip at the very least), 200 warm-up
	# and 2 x 3000 pings last beyond its end however fast the machine.
	run "$1" partition_ms=300@200,delay_us=50 "$2" "-n 3000 -s 64,1472"
	((rc == 0)) || fail "usiw-pair exited $rc"
	n=$(resends $((200 + 2 * 3000 + 1)))
	[[ -n $n ]] && ((n > 0)) || fail "the pingpong did not resend across the cut"
	(($(total partitioned) > 0)) || fail "the forwarder cut no packet"
	echo "PASS: recovered after the cut with $n resends; $(total partitioned) packets cut"
	;;
corrupt-fix)
	# udp_csum=fix (the default): the corrupted datagram passes the UDP
	# check, so only the application's own check can catch it -- for usiw
	# that is TRP's CRC32C; this pingpong has none and must notice bad bytes.
	run memif corrupt=0.05,seed=3 "$1" "-n 100 -s 1472"
	((rc != 0)) || fail "corrupted datagrams went unnoticed"
	grep -Eq '^client\| client: seq [0-9]+ size [0-9]+: byte [0-9]+ is' <<<"$out" ||
		grep -Eq '^client\| client: seq [0-9]+: echo of' <<<"$out" ||
		fail "the client did not report corrupted bytes"
	grep -q '^server| .*bad-cksum 0 ' <<<"$out" || fail "the server dropped bad checksums"
	echo "PASS: corruption reached the application past the UDP checksum"
	;;
bad-spec)
	for spec_and_message in \
		'loss=2|loss must be a fraction of packets from 0 to 1' \
		'bogus=1|unknown key '"'"'bogus'"'"' (keys: loss, dup' \
		'partition_ms=300|partition_ms must be LEN@AT' \
		'loss=0.1,,seed=1|empty item'; do
		spec=${spec_and_message%%|*}
		message=${spec_and_message#*|}
		out=$("$pair" --impair "$spec" --server true --client true 2>&1)
		rc=$?
		printf '%s\n' "$out"
		((rc == 2)) || fail "--impair '$spec': exit status $rc, not 2"
		grep -qF -- "usiw-pair: --impair: " <<<"$out" && grep -qF -- "$message" <<<"$out" ||
			fail "--impair '$spec': no message with '$message'"
	done
	echo "PASS: bad SPECs refused with exit status 2 and the key named"
	;;
*)
	echo "usage: impair-test.sh lossy|partition LINK PINGPONG | corrupt-fix PINGPONG | bad-spec" >&2
	exit 2
	;;
esac
