/* The CM header: what our connection manager adds in front of the
 * application's private data inside TRP's CONNECT_REQUEST, CONNECT_ACCEPT and
 * CONNECT_REJECT (docs/cm.md has the byte layout). */
#ifndef USIW_CM_PROTO_H
#define USIW_CM_PROTO_H

#include <stddef.h>
#include <stdint.h>

#include "trp/trp.h"

#define CM_PROTO_VERSION 1
#define CM_HDR_LEN 8
/* The private data an application may send: TRP's limit less our header. */
#define CM_MAX_PDATA (TRP_MAX_PDATA - CM_HDR_LEN)

struct cm_hdr {
	uint8_t version;
	uint8_t ord;            /* the sender's outbound RDMA Read depth */
	uint8_t ird;            /* the sender's inbound RDMA Read depth */
	uint16_t qpn;           /* the sender's QP number (its UDP port); 0 in REJECT */
	uint8_t pdata_len;      /* application bytes that follow */
};

/* Header then pdata into out (CM_HDR_LEN + pdata_len bytes); returns that
 * length, or -EINVAL if pdata_len > CM_MAX_PDATA. */
int cm_proto_encode(const struct cm_hdr *hdr, const void *pdata, void *out, size_t out_len);
/* Splits TRP private data; -EPROTO if it is not a CM header of our version
 * or the lengths disagree. *pdata points into buf. */
int cm_proto_decode(struct cm_hdr *hdr, const void **pdata, const void *buf, size_t len);

#endif
