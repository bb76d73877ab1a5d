/* The stateless answer to a CONNECT_REQUEST that no connection will take
 * (nothing is open at the port it reached): a CONNECT_REJECT built from the
 * request alone, as a TCP stack answers a SYN to a closed port with a RST.
 * See trp_refusal() in trp.h. */
#include "trp/conn.h"
#include "trp/crc32c.h"

bool trp_refusal(const void *pkt, size_t len, void *out)
{
	struct trp_header req;

	/* Only a well-formed, intact REQUEST is answered: answering anything
	 * else could make two closed ports answer each other forever. */
	if (trp_header_decode(&req, pkt, len) != TRP_OK || req.opcode != TRP_OP_CONNECT_REQUEST ||
	    !trp_checksum_ok(pkt, len))
		return false;
	/* The requester takes a REJECT only if it acknowledges exactly its
	 * REQUEST (ack_psn = the REQUEST's PSN + 1) under its connection id.
	 * Nothing is ever sent after it, so its own PSN is arbitrary. */
	struct trp_header rej = {
		.version = TRP_VERSION,
		.opcode = TRP_OP_CONNECT_REJECT,
		.conn_id = req.conn_id,
		.ack_psn = req.psn + 1,
	};
	trp_header_encode(&rej, out);
	/* Always checksummed: the requester may require it. */
	trp_header_set_checksum(out, trp_checksum_finish(CRC32C_INIT, out));
	return true;
}
