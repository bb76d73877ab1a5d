/* ARP (RFC 826) on the engine's port.  Resolved entries do not age: the
 * fabric is static, and any ARP packet from a peer refreshes its entry. */
#include "arp.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_arp.h>
#include <rte_cycles.h>
#include <rte_hash.h>
#include <rte_hash_crc.h>
#include <rte_malloc.h>

#include "engine_priv.h"

/* How often the timer looks at incomplete entries: fine enough for any
 * [port] arp-interval-ms, coarse enough to cost nothing per progress call. */
#define TIMER_PERIOD_MS 1

static uint64_t ms_to_tsc(uint64_t ms)
{
	return ms * rte_get_tsc_hz() / 1000;
}

int usiw_arp_init(struct usiw_engine *e)
{
	char name[RTE_HASH_NAMESIZE];
	snprintf(name, sizeof(name), "usiw_arp_%u", e->port.id);
	struct rte_hash_parameters p = {
		.name = name,
		.entries = USIW_ARP_ENTRIES,
		.key_len = sizeof(uint32_t),
		.hash_func = rte_hash_crc,
		.socket_id = (int)rte_socket_id(),
	};
	e->arp.table = rte_hash_create(&p);
	e->arp.entries = rte_zmalloc("usiw_arp", sizeof(struct usiw_arp_entry) * USIW_ARP_ENTRIES, 0);
	if (!e->arp.table || !e->arp.entries) {
		usiw_arp_fini(e);
		return -ENOMEM;
	}
	return 0;
}

static void drop_pending(struct usiw_engine *e, struct usiw_arp_entry *a)
{
	e->stats.drop_arp += a->npending;
	rte_pktmbuf_free_bulk(a->pending, a->npending);
	a->npending = 0;
}

void usiw_arp_fini(struct usiw_engine *e)
{
	if (e->arp.table && e->arp.entries) {
		const void *key;
		void *data;
		uint32_t it = 0;
		int32_t pos;
		while ((pos = rte_hash_iterate(e->arp.table, &key, &data, &it)) >= 0)
			drop_pending(e, &e->arp.entries[pos]);
	}
	rte_hash_free(e->arp.table);
	rte_free(e->arp.entries);
	memset(&e->arp, 0, sizeof(e->arp));
}

static struct usiw_arp_entry *lookup(struct usiw_engine *e, uint32_t ipv4)
{
	int32_t pos = rte_hash_lookup(e->arp.table, &ipv4);
	return pos < 0 ? NULL : &e->arp.entries[pos];
}

static struct usiw_arp_entry *add(struct usiw_engine *e, uint32_t ipv4)
{
	int32_t pos = rte_hash_add_key(e->arp.table, &ipv4);
	if (pos < 0)
		return NULL;
	struct usiw_arp_entry *a = &e->arp.entries[pos];
	memset(a, 0, sizeof(*a));
	a->ipv4 = ipv4;
	a->state = USIW_ARP_FAILED;   /* the caller moves it on */
	return a;
}

static void send_arp(struct usiw_engine *e, uint16_t op, const struct rte_ether_addr *dst_mac,
		     uint32_t target_ip)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(e->port.pool);
	if (!m) {
		e->stats.drop_no_mbuf++;
		return;
	}
	struct rte_ether_hdr *eth = (struct rte_ether_hdr *)rte_pktmbuf_append(
		m, sizeof(*eth) + sizeof(struct rte_arp_hdr));
	struct rte_arp_hdr *arp = (struct rte_arp_hdr *)(eth + 1);
	static const struct rte_ether_addr broadcast = {
		.addr_bytes = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff } };

	eth->dst_addr = dst_mac ? *dst_mac : broadcast;
	eth->src_addr = e->port.mac;
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP);
	arp->arp_hardware = rte_cpu_to_be_16(RTE_ARP_HRD_ETHER);
	arp->arp_protocol = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	arp->arp_hlen = RTE_ETHER_ADDR_LEN;
	arp->arp_plen = sizeof(uint32_t);
	arp->arp_opcode = rte_cpu_to_be_16(op);
	arp->arp_data.arp_sha = e->port.mac;
	arp->arp_data.arp_sip = e->attr.ipv4;
	if (dst_mac)
		arp->arp_data.arp_tha = *dst_mac;
	else
		memset(&arp->arp_data.arp_tha, 0, sizeof(arp->arp_data.arp_tha));
	arp->arp_data.arp_tip = target_ip;
	if (op == RTE_ARP_OP_REQUEST)
		e->stats.arp_requests_sent++;
	else
		e->stats.arp_replies_sent++;
	usiw_engine_tx_frame(e, m);
}

static void start_resolution(struct usiw_engine *e, struct usiw_arp_entry *a, uint64_t now)
{
	a->state = USIW_ARP_INCOMPLETE;
	a->requests = 1;
	a->next_tsc = now + ms_to_tsc(e->cfg.arp_interval_ms);
	e->arp.incomplete++;
	send_arp(e, RTE_ARP_OP_REQUEST, NULL, a->ipv4);
}

/* The entry of ipv4 (a: its entry, NULL if it has none yet), resolution
 * started if it is new or its hold-off after a failure is over; NULL when
 * the cache is full. */
static struct usiw_arp_entry *entry_resolving(struct usiw_engine *e, uint32_t ipv4,
					      struct usiw_arp_entry *a)
{
	uint64_t now = rte_get_tsc_cycles();

	if (!a) {
		a = add(e, ipv4);
		if (!a)
			return NULL;
		start_resolution(e, a, now);
	} else if (a->state == USIW_ARP_FAILED && now >= a->next_tsc) {
		start_resolution(e, a, now);
	}
	return a;
}

int usiw_arp_state(struct usiw_engine *e, uint32_t ipv4)
{
	struct usiw_arp_entry *a = entry_resolving(e, ipv4, lookup(e, ipv4));

	return a ? (int)a->state : -ENOSPC;
}

int usiw_arp_output(struct usiw_engine *e, uint32_t ipv4, struct rte_mbuf *m)
{
	struct usiw_arp_entry *a = e->arp.last;

	if (!a || a->ipv4 != ipv4)
		a = lookup(e, ipv4);
	if (a && a->state == USIW_ARP_RESOLVED) {
		struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
		eth->dst_addr = a->mac;
		e->arp.last = a;
		usiw_engine_tx_frame(e, m);
		return 0;
	}
	a = entry_resolving(e, ipv4, a);
	if (a && a->state == USIW_ARP_INCOMPLETE) {
		/* A queued frame may outlive the memory it references
		 * (usiw_udp_reference_data): it gets its own copy. */
		if (a->npending < USIW_ARP_PENDING &&
		    (rte_pktmbuf_is_contiguous(m) || rte_pktmbuf_linearize(m) == 0)) {
			a->pending[a->npending++] = m;
			return 0;
		}
		rte_pktmbuf_free(m);
		return -EAGAIN;
	}
	rte_pktmbuf_free(m);
	e->stats.drop_arp++;
	return -EHOSTUNREACH;
}

static void resolved(struct usiw_engine *e, struct usiw_arp_entry *a,
		     const struct rte_ether_addr *mac)
{
	if (a->state == USIW_ARP_INCOMPLETE)
		e->arp.incomplete--;
	a->state = USIW_ARP_RESOLVED;
	a->mac = *mac;
	for (uint16_t i = 0; i < a->npending; i++) {
		struct rte_ether_hdr *eth = rte_pktmbuf_mtod(a->pending[i], struct rte_ether_hdr *);
		eth->dst_addr = *mac;
		usiw_engine_tx_frame(e, a->pending[i]);
	}
	a->npending = 0;
}

void usiw_arp_input(struct usiw_engine *e, struct rte_mbuf *m)
{
	e->stats.arp_received++;
	if (rte_pktmbuf_data_len(m) < sizeof(struct rte_ether_hdr) + sizeof(struct rte_arp_hdr)) {
		e->stats.drop_malformed++;
		goto out;
	}
	const struct rte_arp_hdr *arp = rte_pktmbuf_mtod_offset(m, const struct rte_arp_hdr *,
								 sizeof(struct rte_ether_hdr));
	if (arp->arp_hardware != rte_cpu_to_be_16(RTE_ARP_HRD_ETHER) ||
	    arp->arp_protocol != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4) ||
	    arp->arp_hlen != RTE_ETHER_ADDR_LEN || arp->arp_plen != sizeof(uint32_t)) {
		e->stats.drop_malformed++;
		goto out;
	}
	const uint32_t sip = arp->arp_data.arp_sip, tip = arp->arp_data.arp_tip;
	const struct rte_ether_addr sha = arp->arp_data.arp_sha;
	const uint16_t op = rte_be_to_cpu_16(arp->arp_opcode);
	const bool for_us = tip == e->attr.ipv4;

	/* RFC 826: update the sender if known; add it if the packet is for us
	 * (it is about to talk to us).  A probe (sip 0) teaches nothing. */
	if (sip != 0 && sip != e->attr.ipv4 && rte_is_valid_assigned_ether_addr(&sha)) {
		struct usiw_arp_entry *a = lookup(e, sip);
		if (!a && for_us)
			a = add(e, sip);
		if (a)
			resolved(e, a, &sha);
	}
	if (for_us && op == RTE_ARP_OP_REQUEST) {
		send_arp(e, RTE_ARP_OP_REPLY, &sha, sip);
		goto out;
	}
	if (!for_us && op == RTE_ARP_OP_REQUEST && sip != tip)
		e->stats.drop_not_for_us++;
out:
	rte_pktmbuf_free(m);
}

void usiw_arp_timer(struct usiw_engine *e)
{
	if (e->arp.incomplete == 0)
		return;
	const uint64_t now = rte_get_tsc_cycles();
	if (now < e->arp.next_timer_tsc)
		return;
	e->arp.next_timer_tsc = now + ms_to_tsc(TIMER_PERIOD_MS);

	const void *key;
	void *data;
	uint32_t it = 0;
	int32_t pos;
	while ((pos = rte_hash_iterate(e->arp.table, &key, &data, &it)) >= 0) {
		struct usiw_arp_entry *a = &e->arp.entries[pos];
		if (a->state != USIW_ARP_INCOMPLETE || now < a->next_tsc)
			continue;
		if (a->requests >= e->cfg.arp_retries) {
			a->state = USIW_ARP_FAILED;
			a->next_tsc = now + ms_to_tsc(USIW_ARP_HOLDOFF_MS);
			e->arp.incomplete--;
			drop_pending(e, a);
			continue;
		}
		a->requests++;
		a->next_tsc = now + ms_to_tsc(e->cfg.arp_interval_ms);
		send_arp(e, RTE_ARP_OP_REQUEST, NULL, a->ipv4);
	}
}

void usiw_arp_announce(struct usiw_engine *e)
{
	send_arp(e, RTE_ARP_OP_REQUEST, NULL, e->attr.ipv4);
}
