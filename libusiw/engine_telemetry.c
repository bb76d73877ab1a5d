/* The engine's counters as the rte_telemetry command /usiw/stats, and those
 * of the layer above (its QPs) as /usiw/qps (read with dpdk-telemetry.py, or
 * by tools/usiw-stat). */
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

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
	ADD(tx_bundled);
	ADD(tx_mux_frames);
	ADD(drop_no_endpoint);
	ADD(closed_port_answers);
	ADD(drop_bad_checksum);
	ADD(drop_not_for_us);
	ADD(drop_malformed);
	ADD(drop_no_mbuf);
	ADD(drop_tx_full);
	ADD(drop_arp);
	ADD(arp_requests_sent);
	ADD(arp_replies_sent);
	ADD(arp_received);
	ADD(link_downs);
#undef ADD
	return 0;
}

/* rte_telemetry's reply is at most 16 KiB (its socket's buffer): a few
 * hundred bytes per QP, so a page shows QPS_SHOWN QPs and counts the rest
 * (qps_not_shown), which the next pages show (/usiw/qps,FIRST). */
#define QPS_SHOWN 32

struct usiw_counters {
	struct rte_tel_data *top;
	struct rte_tel_data *current;   /* the object being filled, or NULL */
	char current_name[64];
	unsigned objects, not_shown;
};

static _Atomic(usiw_counters_report_fn) qp_report;

void usiw_engine_set_qp_report(usiw_counters_report_fn report)
{
	atomic_store(&qp_report, report);
}

static void close_object(struct usiw_counters *out)
{
	if (!out->current)
		return;
	/* keep = 0: the top dict takes the object over and frees it. */
	if (rte_tel_data_add_dict_container(out->top, out->current_name, out->current, 0))
		rte_tel_data_free(out->current);
	out->current = NULL;
}

bool usiw_counters_object(struct usiw_counters *out, const char *name)
{
	close_object(out);
	if (out->objects >= QPS_SHOWN) {
		out->not_shown++;
		return false;
	}
	out->objects++;
	out->current = rte_tel_data_alloc();
	if (!out->current)
		return false;
	rte_tel_data_start_dict(out->current);
	snprintf(out->current_name, sizeof(out->current_name), "%s", name);
	return true;
}

void usiw_counters_value(struct usiw_counters *out, const char *name, uint64_t value)
{
	if (out->current)
		rte_tel_data_add_dict_u64(out->current, name, value);
}

static int qps_cmd(const char *cmd, const char *params, struct rte_tel_data *d)
{
	usiw_counters_report_fn report = atomic_load(&qp_report);
	struct usiw_counters out = { .top = d };
	unsigned long first = 0;
	unsigned all = 0;

	(void)cmd;
	if (params && *params) {
		char *end;

		errno = 0;
		first = strtoul(params, &end, 10);
		if (errno || *end || *params < '0' || *params > '9' || first > UINT32_MAX)
			return -EINVAL; /* telemetry answers null: a bad request */
	}
	rte_tel_data_start_dict(d);
	if (report)
		all = report(&out, (uint32_t)first);
	close_object(&out);
	rte_tel_data_add_dict_u64(d, "qps", all);
	rte_tel_data_add_dict_u64(d, "qps_not_shown", out.not_shown);
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
	/* A help text of 128 bytes or more, for one, fails the registration. */
	if (rte_telemetry_register_cmd("/usiw/stats", stats_cmd,
				       "usiw engine counters: packets, bytes, drops by reason, "
				       "ARP") ||
	    rte_telemetry_register_cmd("/usiw/qps", qps_cmd,
				       "usiw QPs' TRP counters (packets, retransmissions, "
				       "timeouts, RTT, window), 32 by QP number. Parameters: "
				       "int first QP"))
		USIW_LOG(ERR, "usiw's telemetry commands could not be registered: "
			 "usiw-stat will not see this process");
}
