/* ibv_query_device(_ex), ibv_query_port, and the GID and P_Key tables. */
#include "attributes.h"

#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "context.h"
#include "device.h"
#include "limits.h"

int usiw_query_device_ex(struct ibv_context *context,
			 const struct ibv_query_device_ex_input *input,
			 struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct ibv_device_attr_ex full = {0};
	struct ibv_device_attr *a = &full.orig_attr;
	long page_size = sysconf(_SC_PAGESIZE);

	(void)context;
	if (input && input->comp_mask)
		return EINVAL;
	if (attr_size < sizeof(*a))
		return EINVAL;

	snprintf(a->fw_ver, sizeof(a->fw_ver), "%s", USIW_VERSION);
	a->node_guid = htobe64(usiw_device_node_guid());
	a->sys_image_guid = a->node_guid;
	a->max_mr_size = USIW_MAX_MR_SIZE;
	/* Registration records byte ranges; any page size will do. */
	a->page_size_cap = page_size > 0 ? ~((uint64_t)page_size - 1) : 0;
	/* No IEEE OUI belongs to usiw: vendor 0 makes applications take
	 * their generic, vendor-neutral paths. */
	a->vendor_id = 0;
	a->vendor_part_id = 0;
	a->hw_ver = 0;
	a->max_qp = USIW_MAX_QP;
	a->max_qp_wr = USIW_MAX_QP_WR;
	a->device_cap_flags = 0;
	a->max_sge = USIW_MAX_SGE;
	a->max_sge_rd = USIW_MAX_SGE_RD;
	a->max_cq = USIW_MAX_CQ;
	a->max_cqe = USIW_MAX_CQE;
	a->max_mr = USIW_MAX_MR;
	a->max_pd = USIW_MAX_PD;
	a->max_qp_rd_atom = USIW_MAX_QP_RD_ATOM;
	a->max_qp_init_rd_atom = USIW_MAX_QP_INIT_RD_ATOM;
	a->max_res_rd_atom = USIW_MAX_QP * USIW_MAX_QP_RD_ATOM;
	/* RFC 7306 atomics: the responder executes them with the CPU's
	 * atomic instructions, so they are atomic across all QPs. */
	a->atomic_cap = IBV_ATOMIC_HCA;
	a->max_srq = USIW_MAX_SRQ;
	a->max_srq_wr = USIW_MAX_SRQ_WR;
	a->max_srq_sge = USIW_MAX_SRQ_SGE;
	a->max_pkeys = USIW_PKEY_TABLE_LEN;
	a->phys_port_cnt = USIW_PORT_COUNT;

	/* ibv_query_device passes only the size of the original attributes;
	 * ibv_query_device_ex passes its own, maybe older or newer, size. */
	memcpy(attr, &full, attr_size < sizeof(full) ? attr_size : sizeof(full));
	if (attr_size > sizeof(full))
		memset((char *)attr + sizeof(full), 0, attr_size - sizeof(full));
	return 0;
}

enum ibv_mtu usiw_ibv_mtu_for(uint16_t ip_mtu)
{
	if (ip_mtu >= 4096)
		return IBV_MTU_4096;
	if (ip_mtu >= 2048)
		return IBV_MTU_2048;
	if (ip_mtu >= 1024)
		return IBV_MTU_1024;
	if (ip_mtu >= 512)
		return IBV_MTU_512;
	return IBV_MTU_256;
}

/* IB speed and width codes (ibv_query_port(3)) for an Ethernet rate, the way
 * Ethernet RDMA devices express theirs: a lane speed times a lane count. */
static void speed_and_width_for(uint32_t mbps, uint8_t *speed, uint8_t *width)
{
	static const struct {
		uint32_t up_to_mbps;
		uint8_t speed, width;
	} table[] = {
		{ 2500, 1, 1 },      /* SDR 1X */
		{ 5000, 2, 1 },      /* DDR 1X */
		{ 10000, 4, 1 },     /* QDR 1X */
		{ 14000, 16, 1 },    /* FDR 1X */
		{ 25000, 32, 1 },    /* EDR 1X */
		{ 40000, 4, 2 },     /* QDR 4X */
		{ 50000, 64, 1 },    /* HDR 1X */
		{ 100000, 32, 2 },   /* EDR 4X */
		{ 200000, 64, 2 },   /* HDR 4X */
	};

	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		if (mbps <= table[i].up_to_mbps) {
			*speed = table[i].speed;
			*width = table[i].width;
			return;
		}
	}
	*speed = 128;   /* NDR 4X */
	*width = 2;
}

int usiw_query_port(struct ibv_context *context, uint8_t port_num,
		    struct ibv_port_attr *port_attr)
{
	const struct usiw_port_attr *port = usiw_context_of(context)->port;

	if (port_num < 1 || port_num > USIW_PORT_COUNT)
		return EINVAL;

	memset(port_attr, 0, sizeof(*port_attr));
	port_attr->state = port->link_up ? IBV_PORT_ACTIVE : IBV_PORT_DOWN;
	port_attr->max_mtu = usiw_ibv_mtu_for(port->mtu);
	port_attr->active_mtu = port_attr->max_mtu;
	port_attr->gid_tbl_len = USIW_GID_TABLE_LEN;
	/* Connections are made by a connection manager (ours, over TRP). */
	port_attr->port_cap_flags = IBV_PORT_CM_SUP;
	port_attr->max_msg_sz = USIW_MAX_MSG_SIZE;
	port_attr->pkey_tbl_len = USIW_PKEY_TABLE_LEN;
	/* A virtual link may report no speed: call it 10 Gb/s. */
	speed_and_width_for(port->speed_mbps ? port->speed_mbps : 10000,
			    &port_attr->active_speed, &port_attr->active_width);
	/* IBTA PortPhysicalState: 5 LinkUp, 3 Disabled. */
	port_attr->phys_state = port->link_up ? 5 : 3;
	port_attr->link_layer = IBV_LINK_LAYER_ETHERNET;
	return 0;
}

int usiw_gid(struct ibv_context *context, uint32_t port_num, uint32_t index,
	     union ibv_gid *gid)
{
	const struct usiw_port_attr *port = usiw_context_of(context)->port;

	if (port_num < 1 || port_num > USIW_PORT_COUNT ||
	    index >= USIW_GID_TABLE_LEN)
		return EINVAL;
	memset(gid, 0, sizeof(*gid));
	if (index == USIW_GID_INDEX_IPV4) {
		/* ::ffff:a.b.c.d, the IPv4-mapped IPv6 address. */
		gid->raw[10] = 0xff;
		gid->raw[11] = 0xff;
		memcpy(&gid->raw[12], &port->ipv4, sizeof(port->ipv4));
	} else {
		/* iWARP: the MAC in the first six bytes, the rest zero. */
		memcpy(gid->raw, port->mac, sizeof(port->mac));
	}
	return 0;
}

int usiw_pkey(struct ibv_context *context, uint32_t port_num, uint32_t index,
	      uint16_t *pkey)
{
	(void)context;
	if (port_num < 1 || port_num > USIW_PORT_COUNT ||
	    index >= USIW_PKEY_TABLE_LEN)
		return EINVAL;
	*pkey = USIW_DEFAULT_PKEY;
	return 0;
}
