/* The engine's counters as the rte_telemetry command /usiw/stats (read with
 * dpdk-telemetry.py, or by tools/usiw-stat). */
#include <stdbool.h>

#include <rte_telemetry.h>

#include "engine_priv.h"

static int stats_cmd(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct usiw_engine_stats s;
	(void)cmd;
	(void)params;
	if (usiw_engine_stats_current(&s) != 0)
		return -1;
	rte_tel_data_start_dict(d);
#define ADD(field) rte_tel_data_add_dict_u64(d, #field, s.field)
	ADD(rx_packets);
	ADD(rx_bytes);
	ADD(tx_packets);
	ADD(tx_bytes);
	ADD(rx_datagrams);
	ADD(tx_datagrams);
	ADD(drop_no_endpoint);
	ADD(drop_bad_checksum);
	ADD(drop_not_for_us);
	ADD(drop_malformed);
	ADD(drop_no_mbuf);
	ADD(drop_tx_full);
	ADD(drop_arp);
	ADD(arp_requests_sent);
	ADD(arp_replies_sent);
	ADD(arp_received);
#undef ADD
	return 0;
}

/* Commands cannot be unregistered, so this happens once per process; the
 * command reads whichever engine is current. */
void usiw_engine_telemetry_register(void)
{
	static bool registered;
	if (registered)
		return;
	registered = true;
	rte_telemetry_register_cmd("/usiw/stats", stats_cmd,
				   "usiw engine counters: packets, bytes, drops by reason, ARP");
}
