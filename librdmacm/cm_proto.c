/* Encoding and decoding of the CM header, byte by byte (the private data
 * comes from the network and may sit at any alignment). */
#include "cm_proto.h"

#include <errno.h>
#include <string.h>

int cm_proto_encode(const struct cm_hdr *hdr, const void *pdata, void *out, size_t out_len)
{
	uint8_t *p = out;

	if (hdr->pdata_len > CM_MAX_PDATA || out_len < CM_HDR_LEN + (size_t)hdr->pdata_len)
		return -EINVAL;
	p[0] = hdr->version;
	p[1] = 0;               /* flags: none defined */
	p[2] = hdr->ord;
	p[3] = hdr->ird;
	p[4] = (uint8_t)(hdr->qpn >> 8);
	p[5] = (uint8_t)hdr->qpn;
	p[6] = hdr->pdata_len;
	p[7] = 0;
	if (hdr->pdata_len)
		memcpy(p + CM_HDR_LEN, pdata, hdr->pdata_len);
	return CM_HDR_LEN + hdr->pdata_len;
}

int cm_proto_decode(struct cm_hdr *hdr, const void **pdata, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	if (len < CM_HDR_LEN || p[0] != CM_PROTO_VERSION || len != CM_HDR_LEN + (size_t)p[6])
		return -EPROTO;
	hdr->version = p[0];
	hdr->ord = p[2];
	hdr->ird = p[3];
	hdr->qpn = (uint16_t)(p[4] << 8 | p[5]);
	hdr->pdata_len = p[6];
	*pdata = p + CM_HDR_LEN;
	return 0;
}
