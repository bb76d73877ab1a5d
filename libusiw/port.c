/* Port bring-up: probe the device, size the mempool, configure and start the
 * queues (or open usiw's own packet socket, for af_packet:IF), wait (bounded)
 * for link up; and the matching teardown. */
#define _GNU_SOURCE
#include "port.h"

#include <errno.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <rte_alarm.h>
#include <rte_bus.h>
#include <rte_dev.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_interrupts.h>
#include <rte_kvargs.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "memif_sockets.h"

#define MBUF_CACHE 256
#define TX_BUFFER_SIZE 32          /* = the rx burst: one progress pass fills it at most once */
/* The listening flag of /proc/net/unix (__SO_ACCEPTCON in the kernel). */
#define UNIX_FLAG_LISTENING 0x00010000u

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };
	nanosleep(&ts, NULL);
}

static int memif_arg(const char *key, const char *value, void *opaque)
{
	struct usiw_memif_args *a = opaque;
	if (!strcmp(key, "role"))
		a->server = strcmp(value, "client") != 0;
	else if (!strcmp(key, "socket-abstract"))
		a->abstract = strcmp(value, "no") != 0;
	else if (!strcmp(key, "zero-copy"))
		a->zero_copy = !strcmp(value, "yes");
	else if (!strcmp(key, "socket"))
		snprintf(a->socket, sizeof(a->socket), "%s", value);
	return 0;
}

/* The devargs keys net_memif accepts (DPDK 22.11); it ignores every argument,
 * silently, when one of them is not in this list. */
static const char *const memif_keys[] = {
	"id", "role", "bsize", "rsize", "socket", "socket-abstract", "owner-uid",
	"owner-gid", "mac", "zero-copy", "secret", NULL
};

void usiw_memif_args_parse(const char *devargs, struct usiw_memif_args *out)
{
	memset(out, 0, sizeof(*out));
	if (strncmp(devargs, "net_memif", 9) != 0)
		return;
	/* memif's own defaults (DPDK 22.11) */
	out->is_memif = true;
	out->server = false;
	out->abstract = true;
	snprintf(out->socket, sizeof(out->socket), "/run/memif.sock");
	const char *comma = strchr(devargs, ',');
	if (!comma)
		return;
	struct rte_kvargs *kv = rte_kvargs_parse(comma + 1, memif_keys);
	if (!kv) {
		out->bad_args = true;
		return;
	}
	rte_kvargs_process(kv, NULL, memif_arg, out);
	rte_kvargs_free(kv);
}

bool usiw_unix_socket_listening(const char *path, bool abstract)
{
	FILE *f = fopen("/proc/net/unix", "r");
	char line[512];
	bool listening = false;

	if (!f)
		return false;
	while (!listening && fgets(line, sizeof(line), f)) {
		unsigned flags;
		char name[256];
		if (sscanf(line, "%*s %*s %*s %x %*s %*s %*s %255s", &flags, name) != 2)
			continue;
		const char *n = name;
		if (abstract) {
			if (*n != '@')
				continue;
			n++;
		}
		listening = (flags & UNIX_FLAG_LISTENING) && !strcmp(n, path);
	}
	fclose(f);
	return listening;
}

/* A memif server's socket (net_memif's or our own port's) that another
 * server already listens on. */
static int refuse_socket_in_use(const struct usiw_config *cfg, const char *socket, bool abstract,
				char *err, size_t errlen)
{
	if (!usiw_unix_socket_listening(socket, abstract))
		return 0;
	snprintf(err, errlen, "%s: [port] device: memif socket %s%s is in use by another process "
		 "(a memif server is listening on it); give each pair its own socket=", cfg->path,
		 abstract ? "@" : "", socket);
	return -EADDRINUSE;
}

/* memif needs the server's socket free (a stale file makes its bind fail)
 * and the client's socket present before it starts (it connects once). */
static int memif_prepare(const struct usiw_memif_args *a, const struct usiw_config *cfg,
			 char *err, size_t errlen)
{
	if (a->bad_args) {
		snprintf(err, errlen, "%s: [port] device = %s: memif arguments must be key=value "
			 "with keys from: id, role, bsize, rsize, socket, socket-abstract, "
			 "owner-uid, owner-gid, mac, zero-copy, secret", cfg->path, cfg->device);
		return -EINVAL;
	}
	/* An abstract name starts with a NUL in the socket's path. */
	const size_t max = USIW_SOCKET_PATH_MAX - (a->abstract ? 1 : 0);
	if (strlen(a->socket) > max) {
		snprintf(err, errlen, "%s: [port] device: memif socket=%s is %zu bytes long, more "
			 "than a socket's path may be (%zu); choose a shorter path", cfg->path,
			 a->socket, strlen(a->socket), max);
		return -ENAMETOOLONG;
	}
	if (a->server) {
		int rc = refuse_socket_in_use(cfg, a->socket, a->abstract, err, errlen);
		if (rc)
			return rc;
		if (!a->abstract)
			unlink(a->socket);   /* stale: nobody listens on it */
		return 0;
	}
	if (a->abstract)
		return 0;   /* cannot be waited for without connecting */
	uint64_t deadline = now_ms() + (uint64_t)cfg->link_timeout_s * 1000;
	while (!usiw_unix_socket_listening(a->socket, false)) {
		if (now_ms() >= deadline) {
			snprintf(err, errlen, "memif peer did not connect within %u s: no memif "
				 "server is listening on %s (start the role=server side first)",
				 cfg->link_timeout_s, a->socket);
			return -ETIMEDOUT;
		}
		sleep_ms(5);
	}
	return 0;
}

static int find_port(const char *devargs, char *name, size_t namelen, uint16_t *id)
{
	size_t n = strcspn(devargs, ",");
	snprintf(name, namelen, "%.*s", (int)n, devargs);
	if (rte_eth_dev_get_port_by_name(name, id) == 0)
		return 0;
	/* A PCI device may be named differently by the bus (domain added);
	 * with a single port there is no ambiguity. */
	if (rte_eth_dev_count_avail() == 1) {
		RTE_ETH_FOREACH_DEV(*id)
			return 0;
	}
	return -ENODEV;
}

static int wait_link(struct usiw_port *port, const struct usiw_config *cfg,
		     const struct usiw_memif_args *memif, char *err, size_t errlen)
{
	if (cfg->link_timeout_s == 0 || port->memif_server)
		return 0;
	uint64_t deadline = now_ms() + (uint64_t)cfg->link_timeout_s * 1000;
	uint64_t reconnect = now_ms() + USIW_MEMIF_RECONNECT_MS;
	for (;;) {
		if (usiw_port_link(port, NULL))
			return 0;
		if (now_ms() >= deadline)
			break;
		if (memif->is_memif && now_ms() >= reconnect &&
		    !usiw_memif_client_awaits_server(memif)) {
			rte_eth_dev_stop(port->id);
			port->started = rte_eth_dev_start(port->id) == 0;
			reconnect = now_ms() + USIW_MEMIF_RECONNECT_MS;
		}
		sleep_ms(1);
	}
	if (memif->is_memif)
		snprintf(err, errlen, "memif server did not accept us within %u s (socket %s; "
			 "[port] link-timeout in %s)", cfg->link_timeout_s, memif->socket,
			 cfg->path);
	else
		snprintf(err, errlen, "link of %s did not come up within %u s ([port] "
			 "link-timeout in %s)", port->name, cfg->link_timeout_s, cfg->path);
	return -ETIMEDOUT;
}

static void free_buffers(struct usiw_port *port)
{
	rte_free(port->txb);
	rte_mempool_free(port->pool);
	rte_mempool_free(port->ref_pool);
	memset(port, 0, sizeof(*port));
}

/* The port's mbufs, each room for a frame of the MTU; and with refs, the
 * data-less mbufs that reference a sender's memory (port.h, ref_pool). */
static int create_pools(struct usiw_port *port, const struct usiw_config *cfg, bool refs,
			int socket, char *err, size_t errlen)
{
	port->max_frame = cfg->mtu + RTE_ETHER_HDR_LEN;
	unsigned room = RTE_MAX((unsigned)RTE_MBUF_DEFAULT_BUF_SIZE,
				(unsigned)(
				RTE_PKTMBUF_HEADROOM + port->max_frame + RTE_ETHER_CRC_LEN));
	char pool_name[RTE_MEMPOOL_NAMESIZE];
	snprintf(pool_name, sizeof(pool_name), "usiw_mbufs_%u", port->id);
	port->pool = rte_pktmbuf_pool_create(pool_name, cfg->mbufs, MBUF_CACHE, 0, room, socket);
	if (!port->pool) {
		snprintf(err, errlen, "%s: cannot create a pool of %u mbufs of %u bytes (%s): "
			 "lower [port] mbufs in %s or give EAL more memory (-m)", port->name,
			 cfg->mbufs, room, rte_strerror(rte_errno), cfg->path);
		return -ENOMEM;
	}
	if (!refs)
		return 0;
	snprintf(pool_name, sizeof(pool_name), "usiw_refs_%u", port->id);
	port->ref_pool = rte_pktmbuf_pool_create(pool_name, cfg->mbufs, MBUF_CACHE, 0, 0, socket);
	if (!port->ref_pool) {
		snprintf(err, errlen, "%s: cannot create a pool of %u mbufs (%s): lower "
			 "[port] mbufs in %s or give EAL more memory (-m)", port->name,
			 cfg->mbufs, rte_strerror(rte_errno), cfg->path);
		return -ENOMEM;
	}
	return 0;
}

static int create_tx_buffer(struct usiw_port *port, uint64_t *tx_drops, int socket, char *err,
			    size_t errlen)
{
	port->txb = rte_zmalloc_socket("usiw_txb", RTE_ETH_TX_BUFFER_SIZE(TX_BUFFER_SIZE), 0,
				       socket);
	if (!port->txb) {
		snprintf(err, errlen, "%s: out of memory for the tx buffer", port->name);
		return -ENOMEM;
	}
	rte_eth_tx_buffer_init(port->txb, TX_BUFFER_SIZE);
	rte_eth_tx_buffer_set_err_callback(port->txb, rte_eth_tx_buffer_count_callback, tx_drops);
	return 0;
}

static int configure(struct usiw_port *port, const struct usiw_config *cfg, uint64_t *tx_drops,
		     char *err, size_t errlen)
{
	struct rte_eth_dev_info info;
	struct rte_eth_conf conf;
	int rc;

	rc = rte_eth_dev_info_get(port->id, &info);
	if (rc) {
		snprintf(err, errlen, "%s: cannot query the device: %s", port->name, strerror(-rc));
		return rc;
	}
	struct usiw_memif_args memif;
	usiw_memif_args_parse(cfg->device, &memif);
	const bool af_packet = !strcmp(info.driver_name, "net_af_packet");
	port->nb_queues = RTE_MIN(cfg->queues, RTE_MIN(info.max_rx_queues, info.max_tx_queues));
	memset(&conf, 0, sizeof(conf));
	conf.rxmode.mtu = cfg->mtu;
	/* memif (DPDK 22.11) reports 1518 bytes as its largest frame, so ethdev
	 * would refuse a jumbo MTU, yet its rings carry frames of any length (a
	 * frame longer than a ring buffer spans several, chained).  It is
	 * configured at its stated limit and sent frames up to our MTU: the
	 * mbufs are sized from our MTU below, so a jumbo frame arrives in one. */
	if ((uint32_t)cfg->mtu + RTE_ETHER_HDR_LEN + RTE_ETHER_CRC_LEN > info.max_rx_pktlen &&
	    memif.is_memif)
		conf.rxmode.mtu = (uint16_t)(info.max_rx_pktlen - RTE_ETHER_HDR_LEN - RTE_ETHER_CRC_LEN);
	const uint64_t tx_ck = RTE_ETH_TX_OFFLOAD_IPV4_CKSUM | RTE_ETH_TX_OFFLOAD_UDP_CKSUM;
	const uint64_t rx_ck = RTE_ETH_RX_OFFLOAD_IPV4_CKSUM | RTE_ETH_RX_OFFLOAD_UDP_CKSUM;
	port->tx_cksum_offload = (info.tx_offload_capa & tx_ck) == tx_ck;
	port->rx_cksum_offload = (info.rx_offload_capa & rx_ck) == rx_ck;
	if (port->tx_cksum_offload)
		conf.txmode.offloads |= tx_ck;
	if (port->rx_cksum_offload)
		conf.rxmode.offloads |= rx_ck;

	rc = rte_eth_dev_configure(port->id, port->nb_queues, port->nb_queues, &conf);
	if (rc) {
		snprintf(err, errlen, "%s: rte_eth_dev_configure failed (%s) with %u queue(s), "
			 "mtu %u", port->name, strerror(-rc), port->nb_queues, cfg->mtu);
		return rc;
	}
	uint16_t nb_rxd = cfg->rx_ring, nb_txd = cfg->tx_ring;
	rte_eth_dev_adjust_nb_rx_tx_desc(port->id, &nb_rxd, &nb_txd);

	/* memif in copy mode and af_packet copy every frame into their rings
	 * inside rte_eth_tx_burst and free its mbufs there: memory a frame
	 * references is read then and never later, unlike by a NIC's DMA or
	 * memif's zero-copy mode, which hold the mbufs until the peer is done. */
	rc = create_pools(port, cfg, ((memif.is_memif && !memif.zero_copy) || af_packet) &&
			  (info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_MULTI_SEGS),
			  rte_eth_dev_socket_id(port->id), err, errlen);
	if (rc)
		return rc;
	for (uint16_t q = 0; q < port->nb_queues; q++) {
		rc = rte_eth_rx_queue_setup(port->id, q, nb_rxd, rte_eth_dev_socket_id(port->id),
					    NULL, port->pool);
		if (rc == 0)
			rc = rte_eth_tx_queue_setup(port->id, q, nb_txd,
						    rte_eth_dev_socket_id(port->id), NULL);
		if (rc) {
			snprintf(err, errlen, "%s: queue %u setup failed (%s)%s", port->name, q,
				 strerror(-rc), af_packet ?
				 ": af_packet's framesz must fit in one mbuf (here the larger of "
				 "2048 and the MTU plus 142 bytes): lower framesz or raise mtu" : "");
			return rc;
		}
	}
	rc = create_tx_buffer(port, tx_drops, rte_eth_dev_socket_id(port->id), err, errlen);
	if (rc)
		return rc;

	if (cfg->mac_set) {
		struct rte_ether_addr mac;
		memcpy(mac.addr_bytes, cfg->mac, 6);
		/* An af_packet port is a kernel interface, and the kernel takes
		 * in every frame it carries.  Given our MAC, the kernel's IPv4
		 * stack would take each of our frames for its own host: a route
		 * lookup per frame (with the rest of that path, a quarter of the
		 * kernel's time on a ping-pong side; perf, docs/engine.md).  So
		 * it keeps its own MAC and listens promiscuously, and the kernel
		 * drops our frames at once as another host's.  Ports that cannot
		 * take our MAC receive promiscuously too; the engine filters by
		 * MAC itself. */
		if (af_packet || rte_eth_dev_default_mac_addr_set(port->id, &mac) != 0)
			rte_eth_promiscuous_enable(port->id);
		port->mac = mac;
	} else {
		rte_eth_macaddr_get(port->id, &port->mac);
	}
	return 0;
}

/* DPDK's memif leaves a server's socket file behind, and the port stays open
 * for the life of the process (verbs/context.c, keep_engine): the file is
 * removed at exit, or each run's would stay (the next server on the path
 * removes a stale one, memif_prepare, but a path used once would not be). */
static char memif_server_socket_file[USIW_CONFIG_VALUE_MAX];
/* Only the process that listens removes it: a child it forked exits too. */
static pid_t memif_server_pid;

static void remove_memif_server_socket_file(void)
{
	if (getpid() == memif_server_pid)
		unlink(memif_server_socket_file);
}

static void remove_at_exit(const struct usiw_memif_args *memif)
{
	static bool registered;

	snprintf(memif_server_socket_file, sizeof(memif_server_socket_file), "%s", memif->socket);
	memif_server_pid = getpid();
	if (!registered)
		registered = atexit(remove_memif_server_socket_file) == 0;
}

/* [port] device = af_packet:IF.  With a MAC of our own the socket listens
 * promiscuously, and the interface keeps its MAC, as configure() does for
 * DPDK's af_packet. */
static int open_packet_port(struct usiw_port *port, const struct usiw_config *cfg,
			    const char *ifname, uint64_t *tx_drops, char *err, size_t errlen)
{
	snprintf(port->name, sizeof(port->name), "%s", ifname);
	port->nb_queues = 1;
	/* The kernel copies each frame in the send call (packet_socket.h),
	 * so frames may reference a sender's memory. */
	int rc = create_pools(port, cfg, true, (int)rte_socket_id(), err, errlen);
	if (rc == 0)
		rc = create_tx_buffer(port, tx_drops, (int)rte_socket_id(), err, errlen);
	if (rc == 0)
		rc = usiw_packet_socket_open(&port->packet, ifname, port->max_frame, cfg->rx_ring,
					     cfg->mac_set, port->pool, tx_drops, err, errlen);
	if (rc) {
		free_buffers(port);
		return rc;
	}
	port->mac = usiw_packet_socket_mac(port->packet);
	if (cfg->mac_set)
		memcpy(port->mac.addr_bytes, cfg->mac, RTE_ETHER_ADDR_LEN);
	struct usiw_memif_args no_memif = { .is_memif = false };
	rc = wait_link(port, cfg, &no_memif, err, errlen);
	if (rc)
		usiw_port_close(port);
	return rc;
}

/* [port] device = memif:...  Its link: a server's is up once it listens,
 * as net_memif's (usiw_port_link says why); a client's once connected. */
static int open_own_memif_port(struct usiw_port *port, const struct usiw_config *cfg,
			       uint64_t *tx_drops, uint64_t *link_downs, char *err, size_t errlen)
{
	struct usiw_memif_port_args a;
	char why[256];
	int rc = usiw_memif_port_parse(cfg->device, &a, why, sizeof(why));
	if (rc) {
		snprintf(err, errlen, "%s: %s", cfg->path, why);
		return rc;
	}
	if (a.server && (rc = refuse_socket_in_use(cfg, a.socket, false, err, errlen)) != 0)
		return rc;
	snprintf(port->name, sizeof(port->name), "memif:%s", a.server ? "server" : "client");
	port->nb_queues = 1;
	port->memif_server = a.server;
	/* The port copies each frame into the ring in the tx burst
	 * (memif_port.h), so frames may reference a sender's memory. */
	rc = create_pools(port, cfg, true, (int)rte_socket_id(), err, errlen);
	if (rc == 0)
		rc = create_tx_buffer(port, tx_drops, (int)rte_socket_id(), err, errlen);
	if (rc == 0) {
		rc = usiw_memif_port_open(&port->own_memif, &a, port->max_frame, link_downs, why,
					  sizeof(why));
		if (rc)
			snprintf(err, errlen, "%s: %s", cfg->path, why);
	}
	if (rc) {
		free_buffers(port);
		return rc;
	}
	if (cfg->mac_set)
		memcpy(port->mac.addr_bytes, cfg->mac, RTE_ETHER_ADDR_LEN);
	else
		rte_eth_random_addr(port->mac.addr_bytes);
	if (a.server || cfg->link_timeout_s == 0)
		return 0;
	uint64_t deadline = now_ms() + (uint64_t)cfg->link_timeout_s * 1000;
	while (!usiw_memif_port_connected(port->own_memif)) {
		if (now_ms() >= deadline) {
			if (!usiw_unix_socket_listening(a.socket, false))
				snprintf(err, errlen, "memif peer did not connect within %u s: no "
					 "memif server is listening on %s (start the role=server "
					 "side first)", cfg->link_timeout_s, a.socket);
			else
				snprintf(err, errlen, "memif server did not accept us within %u s "
					 "(socket %s; [port] link-timeout in %s)",
					 cfg->link_timeout_s, a.socket, cfg->path);
			usiw_port_close(port);
			return -ETIMEDOUT;
		}
		sleep_ms(1);
	}
	return 0;
}

int usiw_port_open(struct usiw_port *port, const struct usiw_config *cfg, uint64_t *tx_drops,
		   uint64_t *link_downs, char *err, size_t errlen)
{
	struct usiw_memif_args memif;
	int rc;

	memset(port, 0, sizeof(*port));
	const char *ifname = usiw_packet_socket_iface(cfg->device);
	if (ifname)
		return open_packet_port(port, cfg, ifname, tx_drops, err, errlen);
	if (usiw_memif_port_named(cfg->device))
		return open_own_memif_port(port, cfg, tx_drops, link_downs, err, errlen);
	usiw_memif_args_parse(cfg->device, &memif);
	port->is_memif = memif.is_memif;
	port->memif_server = memif.is_memif && memif.server;
	if (memif.is_memif) {
		rc = memif_prepare(&memif, cfg, err, errlen);
		if (rc)
			return rc;
	}

	rc = rte_dev_probe(cfg->device);
	if (rc == 0 && port->memif_server && !memif.abstract && memif.socket[0])
		remove_at_exit(&memif);
	if (rc == 0) {
		port->probed = true;
	} else if (rc != -EEXIST) {
		snprintf(err, errlen, "%s: [port] device = %s: the device could not be probed (%s)%s",
			 cfg->path, cfg->device, strerror(-rc),
			 memif.is_memif ? "; check the memif socket path and role" :
			 "; set USIW_LOG=debug for the driver's messages");
		return rc;
	}
	if (find_port(cfg->device, port->name, sizeof(port->name), &port->id) != 0) {
		snprintf(err, errlen, "%s: [port] device = %s: probed, but no ethdev port appeared",
			 cfg->path, cfg->device);
		usiw_port_close(port);
		return -ENODEV;
	}
	rc = configure(port, cfg, tx_drops, err, errlen);
	if (rc) {
		usiw_port_close(port);
		return rc;
	}

	/* A memif client's start is its one connection attempt: retry it
	 * until the link timeout, for a server that is still coming up. */
	uint64_t deadline = now_ms() + (uint64_t)cfg->link_timeout_s * 1000;
	while ((rc = rte_eth_dev_start(port->id)) != 0 && memif.is_memif && !memif.server &&
	       now_ms() < deadline)
		sleep_ms(10);
	if (rc) {
		snprintf(err, errlen, "%s: the port could not be started (%s)%s", port->name,
			 strerror(-rc), memif.is_memif && !memif.server ?
			 ": the memif server did not accept the connection" : "");
		usiw_port_close(port);
		return rc;
	}
	port->started = true;
	rc = wait_link(port, cfg, &memif, err, errlen);
	if (rc)
		usiw_port_close(port);
	return rc;
}

/* The ethdev half of the teardown: flush, stop, close. */
struct port_teardown {
	struct usiw_port *port;
	bool close;
	sem_t done;
};

static void port_teardown(void *arg)
{
	struct port_teardown *t = arg;
	struct usiw_port *port = t->port;

	if (port->started) {
		if (port->txb)
			usiw_port_tx_flush(port);
		rte_eth_dev_stop(port->id);
		port->started = false;
	}
	if (t->close)
		rte_eth_dev_close(port->id);
	sem_post(&t->done);
}

/* memif (DPDK 22.11) handles its peer's disconnect in EAL's interrupt thread
 * (memif_intr_handler: memif_disconnect, which frees the shared regions and
 * the control channel) without any lock against the application's own
 * rte_eth_dev_stop/close.  At the end of a run both peers close at the same
 * moment, so the two teardowns ran at once: "EAL: Error: Invalid memory"
 * (the regions freed twice) or a SIGSEGV in eal-intr-thread (the handler
 * still running on a device already closed).  The interrupt thread runs one
 * callback at a time, and alarms are its callbacks too: stopping and closing
 * the port from an alarm serializes them with memif's handler, and the stop
 * unregisters that handler, so it never runs on a closed device. */
static void port_teardown_in_intr_thread(struct usiw_port *port, bool close)
{
	struct port_teardown t = { .port = port, .close = close };

	if (!port->started && !close)
		return;
	sem_init(&t.done, 0, 0);
	if (rte_thread_is_intr() || rte_eal_alarm_set(1, port_teardown, &t) != 0)
		port_teardown(&t);
	while (sem_wait(&t.done) != 0)
		;   /* EINTR */
	sem_destroy(&t.done);
}

void usiw_port_close(struct usiw_port *port)
{
	struct rte_eth_dev_info info;
	struct rte_device *dev = NULL;

	if (port->packet || port->own_memif) {
		usiw_port_tx_flush(port);
		if (port->packet)
			usiw_packet_socket_close(port->packet);
		else
			usiw_memif_port_close(port->own_memif);
		free_buffers(port);
		return;
	}
	if (port->name[0] && rte_eth_dev_is_valid_port(port->id) &&
	    rte_eth_dev_info_get(port->id, &info) == 0)
		dev = info.device;
	port_teardown_in_intr_thread(port, dev != NULL);
	if (dev && port->probed)
		rte_dev_remove(dev);
	free_buffers(port);
}

/* A memif server counts as up as soon as its socket listens, before its
 * client attaches: applications connect their peers out of band right after
 * opening the device (perftest's TCP exchange) and check the port first, so
 * waiting for the client at open would make the server's listener race the
 * client's connect.  Frames sent before the client attaches are lost like
 * any frame, and TRP retransmits them; but a QP only sends to a peer that
 * already exists. */
bool usiw_port_link(const struct usiw_port *port, uint32_t *speed_mbps)
{
	struct rte_eth_link link;
	if (port->packet) {
		if (speed_mbps)
			*speed_mbps = 0;
		return usiw_packet_socket_link_up(port->packet);
	}
	if (port->own_memif && !port->memif_server) {
		if (speed_mbps)
			*speed_mbps = 0;
		return usiw_memif_port_connected(port->own_memif);
	}
	if (port->memif_server) {
		if (speed_mbps)
			*speed_mbps = 0;
		return true;
	}
	if (rte_eth_link_get_nowait(port->id, &link) != 0)
		return false;
	if (speed_mbps)
		*speed_mbps = link.link_speed == RTE_ETH_SPEED_NUM_UNKNOWN ? 0 : link.link_speed;
	return link.link_status == RTE_ETH_LINK_UP;
}
