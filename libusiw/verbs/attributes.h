/* What usiw0 says about itself: device and port attributes, GIDs, P_Keys. */
#ifndef USIW_VERBS_ATTRIBUTES_H
#define USIW_VERBS_ATTRIBUTES_H

#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

int usiw_query_device_ex(struct ibv_context *context,
			 const struct ibv_query_device_ex_input *input,
			 struct ibv_device_attr_ex *attr, size_t attr_size);
int usiw_query_port(struct ibv_context *context, uint8_t port_num,
		    struct ibv_port_attr *port_attr);

/* The largest IB MTU that fits the link's IP MTU, as iWARP devices report. */
enum ibv_mtu usiw_ibv_mtu_for(uint16_t ip_mtu);

/* 0, or EINVAL for a port or index usiw0 does not have. */
int usiw_gid(struct ibv_context *context, uint32_t port_num, uint32_t index,
	     union ibv_gid *gid);
int usiw_pkey(struct ibv_context *context, uint32_t port_num, uint32_t index,
	      uint16_t *pkey);   /* host byte order */

#endif
