/* usiw-impair: a forwarder between two Ethernet ports that drops, duplicates,
 * reorders, delays and corrupts frames as a SPEC says (impair/spec.h), with
 * the same per-packet decisions as the simulated link of the protocol tests
 * (impair/fate.h).  Run with --help; docs/impair.md explains the choices. */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_ip_frag.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_timer.h>
#include <rte_udp.h>

#include "config.h"
#include "port.h"
#include "impair/fate.h"
#include "impair/spec.h"

#define BURST 32
#define MAX_EAL_ARGS 64
/* Copies waiting for their release time.  Each holds an mbuf, so the ports'
 * pools (8191 mbufs each) bound them anyway. */
#define HELD_CAPACITY 16383
#define DEFAULT_IDLE_SLEEP_US 20

static const char usage_text[] =
	"usage: usiw-impair --port0 DEVICE --port1 DEVICE [--spec SPEC] [--mtu N]\n"
	"                   [--link-timeout S] [--idle-sleep-us N] [--eal-args 'ARGS'] [--check]\n"
	"\n"
	"Forwards every frame between two DPDK ports (vdev device strings such as\n"
	"net_memif0,role=client,socket=/tmp/a.sock or net_af_packet0,iface=veth0),\n"
	"impaired as SPEC says, in each direction:\n"
	"  loss=F,dup=F,reorder=F,corrupt=F   fractions of packets (0 to 1)\n"
	"  delay_us=N,jitter_us=N,reorder_delay_us=N,rate_mbps=N,seed=N\n"
	"  partition_ms=LEN@AT                 cut the link for LEN ms, AT ms after its\n"
	"                                      first IPv4 frame\n"
	"  stall_ms=LEN@AT                     hold what is due in that window until its\n"
	"                                      end (delay, no loss)\n"
	"  udp_csum=fix|keep                   after corrupting a UDP payload, recompute\n"
	"                                      its checksum (default: the receiver's own\n"
	"                                      check, TRP's CRC32C, must catch it) or keep\n"
	"                                      it stale (the receiver's UDP check drops it)\n"
	"e.g. --spec loss=0.01,dup=0.005,reorder=0.01,delay_us=50,corrupt=0.001,seed=1\n"
	"(docs/impair.md has every key).  Default SPEC: '' (forward unimpaired).\n"
	"\n"
	"  --mtu N            IP MTU of both links, sizes the mbufs; default 1500\n"
	"  --link-timeout S   wait up to S s for each port's link (a memif port0 client\n"
	"                     waits for its server); default 10\n"
	"  --idle-sleep-us N  sleep N us after a poll that found nothing (never past a\n"
	"                     held frame's release); default 20; 0 = busy-poll\n"
	"  --eal-args 'ARGS'  EAL arguments instead of the defaults\n"
	"                     '--no-pci --no-huge -m 256 --file-prefix usiw-impair-PID\n"
	"                     --log-level=error' (USIW_LOG=LEVEL sets that level)\n"
	"  --check            check the arguments (the SPEC above all) and exit\n"
	"\n"
	"\n"
	"Counters of each direction are printed at exit (SIGINT, SIGTERM) and on\n"
	"SIGUSR1.  Exit status: 0 after a signal, 1 if a port cannot be used, 2 on\n"
	"bad arguments.\n";

/* A copy of a frame held until its release time (delay, jitter, or a
 * reordering hold): an rte_timer, so DPDK's timer list keeps them ordered by
 * release time and rte_timer_manage() hands them back when due. */
struct held_frame {
	struct rte_timer timer;
	struct forwarder *fw;
	struct rte_mbuf *m;
	enum impair_dir dir;
};

/* Where the UDP payload of a frame is; payload_len 0 for anything that is
 * not an unfragmented IPv4/UDP datagram (ARP above all), which is never
 * corrupted. */
struct udp_layout {
	uint16_t l4_off, payload_off;
	size_t payload_len;
};

struct forwarder {
	struct usiw_port port[2];
	uint64_t tx_refused[2];          /* by port: frames its tx queue refused */
	uint64_t no_mbuf[2];             /* by direction: duplicates not made */
	uint64_t hold_full[2];           /* by direction: copies dropped, no held_frame */
	struct impair impair;
	struct rte_mempool *held_pool;
	bool started;                    /* the link's clock runs (link_time_ns) */
	uint64_t start_tsc, hz;
	unsigned idle_sleep_us;
};

static volatile sig_atomic_t stop_requested;
static volatile sig_atomic_t print_requested;

static void on_stop(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static void on_print(int sig)
{
	(void)sig;
	print_requested = 1;
}

/* Frames of direction A to B (port0 to port1) leave by port1, and back. */
static struct usiw_port *out_port(struct forwarder *fw, enum impair_dir dir)
{
	return &fw->port[dir == IMPAIR_A_TO_B ? 1 : 0];
}

static uint64_t elapsed_ns(const struct forwarder *fw, uint64_t tsc)
{
	if (!fw->started)
		return 0;
	uint64_t d = tsc - fw->start_tsc;

	return d / fw->hz * NS_PER_S + d % fw->hz * NS_PER_S / fw->hz;
}

/* The link's time in ns, the clock of impair/fate.h: 0 until the first
 * IPv4 frame (in either direction), so that a partition's AT counts from the
 * start of the endpoints' conversation -- not from their ARP, nor from
 * however long each took to start. */
static uint64_t link_time_ns(struct forwarder *fw, const struct rte_mbuf *m, uint64_t tsc)
{
	if (!fw->started) {
		const struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);

		if (m->data_len < sizeof(*eth) ||
		    eth->ether_type != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4))
			return 0;
		fw->start_tsc = tsc;
		fw->started = true;
	}
	return elapsed_ns(fw, tsc);
}

static uint64_t ns_to_ticks(const struct forwarder *fw, uint64_t ns)
{
	return ns / NS_PER_S * fw->hz + ns % NS_PER_S * fw->hz / NS_PER_S;
}

static struct udp_layout udp_layout(const struct rte_mbuf *m)
{
	struct udp_layout lay = { 0, 0, 0 };
	const size_t l3_off = sizeof(struct rte_ether_hdr);

	if (m->data_len < l3_off + sizeof(struct rte_ipv4_hdr) + sizeof(struct rte_udp_hdr))
		return lay;
	const struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	const struct rte_ipv4_hdr *ip =
		rte_pktmbuf_mtod_offset(m, const struct rte_ipv4_hdr *, l3_off);
	if (eth->ether_type != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4) ||
	    (ip->version_ihl >> 4) != 4 || ip->next_proto_id != IPPROTO_UDP ||
	    rte_ipv4_frag_pkt_is_fragmented(ip))
		return lay;
	const size_t l4_off = l3_off + rte_ipv4_hdr_len(ip);
	if (rte_ipv4_hdr_len(ip) < sizeof(*ip) || m->data_len < l4_off + sizeof(struct rte_udp_hdr))
		return lay;
	const struct rte_udp_hdr *udp = rte_pktmbuf_mtod_offset(m, const struct rte_udp_hdr *, l4_off);
	const size_t udp_len = rte_be_to_cpu_16(udp->dgram_len);
	const size_t payload_off = l4_off + sizeof(*udp);
	if (udp_len < sizeof(*udp) || m->pkt_len < payload_off)
		return lay;
	lay.l4_off = (uint16_t)l4_off;
	lay.payload_off = (uint16_t)payload_off;
	lay.payload_len = RTE_MIN(udp_len - sizeof(*udp), (size_t)m->pkt_len - payload_off);
	return lay;
}

static void flip_bit(struct rte_mbuf *m, size_t offset, uint8_t mask)
{
	while (offset >= m->data_len) {
		offset -= m->data_len;
		m = m->next;
	}
	*rte_pktmbuf_mtod_offset(m, uint8_t *, offset) ^= mask;
}

/* Flips bits of the UDP payload only.  A flipped Ethernet, IP or UDP header
 * would make the receiver's engine drop the frame as not for it or
 * malformed: just a loss.  Flipping payload bits and (with udp_csum=fix)
 * recomputing the UDP checksum models damage that the UDP checksum does not
 * see -- made before it was computed, in a middlebox that rewrites it, or
 * bit patterns a 16-bit sum cannot tell apart -- which is what TRP's
 * end-to-end CRC32C is for: the frame reaches TRP, and TRP must drop it. */
static void corrupt(const struct forwarder *fw, struct rte_mbuf *m, const struct udp_layout *lay,
		    const struct impair_copy *c)
{
	struct rte_ipv4_hdr *ip =
		rte_pktmbuf_mtod_offset(m, struct rte_ipv4_hdr *, sizeof(struct rte_ether_hdr));
	struct rte_udp_hdr *udp = rte_pktmbuf_mtod_offset(m, struct rte_udp_hdr *, lay->l4_off);

	for (unsigned i = 0; i < c->n_flips; i++)
		flip_bit(m, lay->payload_off + c->flips[i].offset, c->flips[i].mask);
	/* A checksum of 0 means "none" in IPv4: nothing to fix. */
	if (fw->impair.cfg.udp_csum == IMPAIR_UDP_CSUM_FIX && udp->dgram_cksum != 0) {
		udp->dgram_cksum = 0;
		udp->dgram_cksum = rte_ipv4_udptcp_cksum_mbuf(m, ip, lay->l4_off);
	}
}

/* A copy reaches the far side: out of the other port, unless the link is
 * cut by now. */
static void transmit(struct forwarder *fw, enum impair_dir dir, struct rte_mbuf *m, uint64_t now_ns)
{
	const struct usiw_port *out = out_port(fw, dir);

	if (!impair_release(&fw->impair, dir, now_ns)) {
		rte_pktmbuf_free(m);
		return;
	}
	rte_eth_tx_buffer(out->id, 0, out->txb, m);
}

static void release_held(struct rte_timer *timer, void *arg)
{
	struct held_frame *h = arg;
	struct forwarder *fw = h->fw;

	(void)timer;
	transmit(fw, h->dir, h->m, elapsed_ns(fw, rte_get_timer_cycles()));
	rte_mempool_put(fw->held_pool, h);
}

static void schedule(struct forwarder *fw, enum impair_dir dir, struct rte_mbuf *m,
		     const struct impair_copy *c, uint64_t now_ns)
{
	struct held_frame *h;

	if (c->release_ns <= now_ns) {
		transmit(fw, dir, m, now_ns);
		return;
	}
	if (rte_mempool_get(fw->held_pool, (void **)&h) != 0) {
		fw->hold_full[dir]++;
		rte_pktmbuf_free(m);
		return;
	}
	h->fw = fw;
	h->m = m;
	h->dir = dir;
	rte_timer_init(&h->timer);
	rte_timer_reset(&h->timer, ns_to_ticks(fw, c->release_ns - now_ns), SINGLE, rte_lcore_id(),
			release_held, h);
}

static void forward(struct forwarder *fw, enum impair_dir dir, struct rte_mbuf *m, uint64_t now_tsc)
{
	const uint64_t now_ns = link_time_ns(fw, m, now_tsc);
	const struct udp_layout lay = udp_layout(m);
	struct rte_mbuf *copies[2] = { m, NULL };
	struct impair_fate fate;

	impair_decide(&fw->impair, dir, now_ns, m->pkt_len, lay.payload_len, &fate);
	if (fate.n_copies == 0) {
		rte_pktmbuf_free(m);
		return;
	}
	/* The duplicate is made before either copy is corrupted: each copy
	 * has its own fate. */
	if (fate.n_copies == 2) {
		copies[1] = rte_pktmbuf_copy(m, m->pool, 0, UINT32_MAX);
		if (!copies[1])
			fw->no_mbuf[dir]++;
	}
	for (unsigned i = 0; i < fate.n_copies; i++) {
		if (!copies[i])
			continue;
		if (fate.copy[i].n_flips)
			corrupt(fw, copies[i], &lay, &fate.copy[i]);
		schedule(fw, dir, copies[i], &fate.copy[i], now_ns);
	}
}

/* Sleeps when a poll found nothing, so the forwarder leaves the CPU to the
 * two endpoints (which busy-poll) -- but never past the next held frame. */
static void idle_sleep(const struct forwarder *fw)
{
	uint64_t us = fw->idle_sleep_us;
	int64_t ticks = rte_timer_next_ticks();

	if (ticks >= 0)
		us = RTE_MIN(us, (uint64_t)ticks * 1000000 / fw->hz);
	if (us)
		rte_delay_us_sleep((unsigned)us);
}

static void print_counters(struct forwarder *fw)
{
	static const char *const names[2] = { "port0->port1", "port1->port0" };

	for (int d = 0; d < 2; d++) {
		const struct impair_dir_stats *st = &fw->impair.stats[d];
		const struct usiw_port *out = out_port(fw, (enum impair_dir)d);

		printf("usiw-impair: %s: packets %" PRIu64 " delivered %" PRIu64 " lost %" PRIu64
		       " partitioned %" PRIu64 " duplicated %" PRIu64 " reordered %" PRIu64
		       " corrupted %" PRIu64 " tx-refused %" PRIu64 " no-mbuf %" PRIu64
		       " hold-full %" PRIu64 "\n", names[d], st->sent, st->delivered, st->lost,
		       st->partitioned, st->duplicated, st->reordered, st->corrupted,
		       fw->tx_refused[out - fw->port], fw->no_mbuf[d], fw->hold_full[d]);
	}
	fflush(stdout);
}

static void run(struct forwarder *fw)
{
	struct rte_mbuf *pkts[BURST];

	while (!stop_requested) {
		const uint64_t now_tsc = rte_get_timer_cycles();
		unsigned got = 0;

		for (int d = 0; d < 2; d++) {
			uint16_t n = rte_eth_rx_burst(fw->port[d].id, 0, pkts, BURST);

			for (uint16_t i = 0; i < n; i++)
				forward(fw, (enum impair_dir)d, pkts[i], now_tsc);
			got += n;
		}
		rte_timer_manage();
		for (int p = 0; p < 2; p++)
			rte_eth_tx_buffer_flush(fw->port[p].id, 0, fw->port[p].txb);
		if (print_requested) {
			print_requested = 0;
			print_counters(fw);
		}
		if (!got)
			idle_sleep(fw);
	}
}

struct options {
	const char *spec;
	const char *device[2];
	const char *eal_args;
	bool check;
	unsigned mtu, link_timeout_s, idle_sleep_us;
};

static bool parse_number(const char *s, unsigned min, unsigned max, unsigned *out)
{
	char *end;
	unsigned long v;

	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (*end || errno || v < min || v > max)
		return false;
	*out = (unsigned)v;
	return true;
}

static int usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "usiw-impair: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n(usiw-impair --help for usage)\n");
	return 2;
}

/* Returns -1 to go on, else the exit status. */
static int parse_options(int argc, char **argv, struct options *o, struct impair_config *cfg)
{
	static const struct option longopts[] = {
		{ "spec", required_argument, NULL, 's' },
		{ "port0", required_argument, NULL, '0' },
		{ "port1", required_argument, NULL, '1' },
		{ "eal-args", required_argument, NULL, 'e' },
		{ "mtu", required_argument, NULL, 'm' },
		{ "link-timeout", required_argument, NULL, 't' },
		{ "idle-sleep-us", required_argument, NULL, 'i' },
		{ "check", no_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char err[512];
	int opt;

	*o = (struct options){ .spec = "", .mtu = 1500, .link_timeout_s = 10,
			       .idle_sleep_us = DEFAULT_IDLE_SLEEP_US };
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (opt) {
		case 's': o->spec = optarg; break;
		case '0': o->device[0] = optarg; break;
		case '1': o->device[1] = optarg; break;
		case 'e': o->eal_args = optarg; break;
		case 'm':
			if (!parse_number(optarg, 576, 9000, &o->mtu))
				return usage_error("--mtu wants 576..9000, not '%s'", optarg);
			break;
		case 't':
			if (!parse_number(optarg, 1, 3600, &o->link_timeout_s))
				return usage_error("--link-timeout wants 1..3600 seconds, not '%s'",
						   optarg);
			break;
		case 'i':
			if (!parse_number(optarg, 0, 1000000, &o->idle_sleep_us))
				return usage_error("--idle-sleep-us wants 0..1000000, not '%s'",
						   optarg);
			break;
		case 'c': o->check = true; break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:
			return usage_error("unknown or incomplete option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	impair_config_default(cfg);
	if (impair_config_parse(cfg, o->spec, err, sizeof(err)))
		return usage_error("--spec: %s", err);
	if (o->check)
		return 0;
	if (!o->device[0] || !o->device[1])
		return usage_error("%s", "--port0 DEVICE and --port1 DEVICE are both required");
	for (int p = 0; p < 2; p++)
		if (strlen(o->device[p]) >= USIW_CONFIG_VALUE_MAX)
			return usage_error("a DEVICE is at most 255 characters: '%s'", o->device[p]);
	return -1;
}

/* EAL keeps pointers into argv: static, for the life of the process. */
static int start_eal(const struct options *o)
{
	static char args[1024];
	static char *argv[MAX_EAL_ARGS + 2];
	int argc = 0;

	const char *level = getenv("USIW_LOG");

	if (o->eal_args)
		snprintf(args, sizeof(args), "%s", o->eal_args);
	else
		snprintf(args, sizeof(args), "--no-pci --no-huge -m 256 --file-prefix usiw-impair-%d "
			 "--log-level=%s", (int)getpid(), level && *level ? level : "error");
	argv[argc++] = "usiw-impair";
	for (char *save = NULL, *tok = strtok_r(args, " \t", &save); tok;
	     tok = strtok_r(NULL, " \t", &save)) {
		if (argc > MAX_EAL_ARGS) {
			fprintf(stderr, "usiw-impair: --eal-args: more than %d arguments\n",
				MAX_EAL_ARGS);
			return 2;
		}
		argv[argc++] = tok;
	}
	argv[argc] = NULL;

	/* EAL pins this thread to one CPU; on a machine as small as this one
	 * the scheduler must stay free to run it wherever an endpoint is not. */
	cpu_set_t saved;
	bool have_saved = pthread_getaffinity_np(pthread_self(), sizeof(saved), &saved) == 0;

	rte_openlog_stream(stderr);
	if (rte_eal_init(argc, argv) < 0) {
		fprintf(stderr, "usiw-impair: EAL did not start (%s) with arguments '%s'\n",
			rte_strerror(rte_errno), o->eal_args ? o->eal_args : args);
		return 1;
	}
	if (have_saved)
		pthread_setaffinity_np(pthread_self(), sizeof(saved), &saved);
	return -1;
}

static int open_ports(struct forwarder *fw, const struct options *o)
{
	for (int p = 0; p < 2; p++) {
		struct usiw_config cfg;
		char err[1024];

		usiw_config_defaults(&cfg);
		snprintf(cfg.path, sizeof(cfg.path), "--port%d", p);
		snprintf(cfg.device, sizeof(cfg.device), "%s", o->device[p]);
		cfg.mtu = (uint16_t)o->mtu;
		cfg.link_timeout_s = o->link_timeout_s;
		if (usiw_port_open(&fw->port[p], &cfg, &fw->tx_refused[p], NULL, err,
				   sizeof(err))) {
			fprintf(stderr, "usiw-impair: %s\n", err);
			return -1;
		}
		/* A forwarder takes frames for every address; ports that cannot
		 * filter by address (memif) refuse this, and need not. */
		rte_eth_promiscuous_enable(fw->port[p].id);
	}
	return 0;
}

int main(int argc, char **argv)
{
	static struct forwarder fw;
	struct impair_config cfg;
	struct options o;
	int rc;

	/* From the start, so that a signal while the ports come up (bounded by
	 * --link-timeout) still ends in a clean exit, not in leftover files. */
	struct sigaction stop = { .sa_handler = on_stop }, print = { .sa_handler = on_print };
	sigaction(SIGINT, &stop, NULL);
	sigaction(SIGTERM, &stop, NULL);
	sigaction(SIGUSR1, &print, NULL);

	rc = parse_options(argc, argv, &o, &cfg);
	if (rc >= 0)
		return rc;
	rc = start_eal(&o);
	if (rc >= 0)
		return rc;
	rc = 1;
	fw.hz = rte_get_timer_hz();
	fw.idle_sleep_us = o.idle_sleep_us;
	impair_init(&fw.impair, &cfg);
	/* nanosleep wakes up to 50 us late by default (timer slack); the idle
	 * sleep is meant to be short. */
	prctl(PR_SET_TIMERSLACK, 1UL);
	if (rte_timer_subsystem_init() != 0) {
		fprintf(stderr, "usiw-impair: rte_timer_subsystem_init failed\n");
		goto out;
	}
	fw.held_pool = rte_mempool_create("usiw_impair_held", HELD_CAPACITY,
					  sizeof(struct held_frame), 0, 0, NULL, NULL, NULL, NULL,
					  (int)rte_socket_id(), RTE_MEMPOOL_F_SP_PUT |
					  RTE_MEMPOOL_F_SC_GET);
	if (!fw.held_pool) {
		fprintf(stderr, "usiw-impair: no memory for %u held frames (%s)\n", HELD_CAPACITY,
			rte_strerror(rte_errno));
		goto out;
	}
	if (open_ports(&fw, &o))
		goto out;

	printf("usiw-impair: forwarding %s <-> %s, SPEC '%s' (seed %lu), idle sleep %u us\n",
	       fw.port[0].name, fw.port[1].name, o.spec, cfg.seed, o.idle_sleep_us);
	fflush(stdout);
	run(&fw);
	print_counters(&fw);
	rc = 0;
out:
	/* Frames still held are freed with the pools.  No rte_eal_cleanup():
	 * in DPDK 22.11 it unmaps EAL's memory while the interrupt thread still
	 * runs, which then faulted on an interrupt source there (eal-intr-thread,
	 * in 1 of ~45 heavy-loss qp-lat runs; bench/raw-dpdk.c met the same). */
	usiw_port_close(&fw.port[1]);
	usiw_port_close(&fw.port[0]);
	rte_mempool_free(fw.held_pool);
	return rc;
}
