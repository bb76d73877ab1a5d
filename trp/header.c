/* TRP header encode/decode.  Fields are big-endian, read and written
 * through usiw/byteorder.h, so any buffer alignment is fine (no
 * packed-struct casts). Layout: see docs/protocol-trp.md. */
#include "trp/trp.h"
#include "trp/crc32c.h"
#include "usiw/byteorder.h"

#include <string.h>

enum {
	OFF_VERSION = 0,
	OFF_OPCODE = 1,
	OFF_WINDOW = 2,
	OFF_CONN_ID = 4,
	OFF_PSN = 8,
	OFF_ACK_PSN = 12,
	OFF_SACK = 16,
	OFF_LENGTH = 24,
	OFF_CHECKSUM = 26,
};
_Static_assert(OFF_CHECKSUM + 4 == TRP_HDR_LEN, "header layout");
_Static_assert((14 + 20 + 8 + TRP_HDR_LEN) % 8 == 0, "DDP header 8-byte aligned");

void trp_header_encode(const struct trp_header *hdr, void *buf)
{
	uint8_t *p = buf;

	p[OFF_VERSION] = hdr->version;
	p[OFF_OPCODE] = hdr->opcode;
	put_be16(p + OFF_WINDOW, hdr->window);
	put_be32(p + OFF_CONN_ID, hdr->conn_id);
	put_be32(p + OFF_PSN, hdr->psn);
	put_be32(p + OFF_ACK_PSN, hdr->ack_psn);
	put_be64(p + OFF_SACK, hdr->sack);
	put_be16(p + OFF_LENGTH, hdr->length);
	put_be32(p + OFF_CHECKSUM, hdr->checksum);
}

/* Largest payload each opcode may carry; DATA is bounded by the 16-bit
 * length field only. */
static size_t max_payload(unsigned opcode)
{
	switch (opcode) {
	case TRP_OP_DATA:
		return UINT16_MAX;
	case TRP_OP_CONNECT_REQUEST:
	case TRP_OP_CONNECT_ACCEPT:
	case TRP_OP_CONNECT_REJECT:
		return TRP_MAX_PDATA;
	case TRP_OP_NOT_READY:
		return TRP_NOT_READY_LEN;
	default:
		return 0;
	}
}

int trp_header_decode(struct trp_header *hdr, const void *pkt, size_t len)
{
	const uint8_t *p = pkt;

	if (len < TRP_HDR_LEN)
		return TRP_E_SHORT;
	hdr->version = p[OFF_VERSION];
	hdr->opcode = p[OFF_OPCODE];
	hdr->window = get_be16(p + OFF_WINDOW);
	hdr->conn_id = get_be32(p + OFF_CONN_ID);
	hdr->psn = get_be32(p + OFF_PSN);
	hdr->ack_psn = get_be32(p + OFF_ACK_PSN);
	hdr->sack = get_be64(p + OFF_SACK);
	hdr->length = get_be16(p + OFF_LENGTH);
	hdr->checksum = get_be32(p + OFF_CHECKSUM);
	if (hdr->version != TRP_VERSION)
		return TRP_E_VERSION;
	if (hdr->opcode >= TRP_OP_COUNT)
		return TRP_E_OPCODE;
	if (len - TRP_HDR_LEN < hdr->length || hdr->length > max_payload(hdr->opcode) ||
	    (hdr->opcode == TRP_OP_NOT_READY && hdr->length != TRP_NOT_READY_LEN))
		return TRP_E_LENGTH;
	return TRP_OK;
}

size_t trp_packet_span(const void *pkt, size_t len)
{
	if (len < TRP_HDR_LEN)
		return 0;
	size_t span = TRP_HDR_LEN + get_be16((const uint8_t *)pkt + OFF_LENGTH);
	return span <= len ? span : 0;
}

/* The checksum covers the payload first and then the header (with the
 * checksum field zero), so that the payload's CRC state can be taken over
 * the ULP header and the data where they lie, apart, and finished over the
 * header (send_slot_xmit hashes the payload at every transmission, and says
 * why). */
uint32_t trp_checksum_finish(uint32_t payload_state, const void *hdr_with_zero_csum)
{
	uint32_t crc = crc32c_final(crc32c_update(payload_state, hdr_with_zero_csum, TRP_HDR_LEN));

	return crc ? crc : 0xffffffffu; /* 0 means "no checksum" on the wire */
}

bool trp_checksum_ok(const void *pkt, size_t len)
{
	uint8_t hdr[TRP_HDR_LEN];
	uint32_t sent, state;

	len = trp_packet_span(pkt, len);
	if (!len)
		return false;
	memcpy(hdr, pkt, TRP_HDR_LEN);
	sent = get_be32(hdr + OFF_CHECKSUM);
	if (sent == 0)
		return true;
	put_be32(hdr + OFF_CHECKSUM, 0);
	state = crc32c_update(CRC32C_INIT, (const uint8_t *)pkt + TRP_HDR_LEN, len - TRP_HDR_LEN);
	return trp_checksum_finish(state, hdr) == sent;
}

void trp_header_set_checksum(void *hdr, uint32_t checksum)
{
	put_be32((uint8_t *)hdr + OFF_CHECKSUM, checksum);
}

const char *trp_opcode_name(unsigned opcode)
{
	static const char *const names[TRP_OP_COUNT] = {
		[TRP_OP_DATA] = "DATA",
		[TRP_OP_CONNECT_REQUEST] = "CONNECT_REQUEST",
		[TRP_OP_CONNECT_ACCEPT] = "CONNECT_ACCEPT",
		[TRP_OP_CONNECT_REJECT] = "CONNECT_REJECT",
		[TRP_OP_SHUTDOWN] = "SHUTDOWN",
		[TRP_OP_ACK] = "ACK",
		[TRP_OP_KEEPALIVE] = "KEEPALIVE",
		[TRP_OP_RESET] = "RESET",
		[TRP_OP_NOT_READY] = "NOT_READY",
	};
	return opcode < TRP_OP_COUNT ? names[opcode] : "UNKNOWN";
}
