/* The stateless answer of a port where no connection is open, built from
 * the packet alone (see trp_closed_port_answer() in trp.h). */
#include "trp/conn.h"
#include "trp/crc32c.h"

/* Opcodes that a live end would answer, so that their sender waits for an
 * answer: a closed port tells it at once that none will come.  Never an
 * ACK or a NOT_READY, which need no answer, nor a RESET: answering one
 * could make two closed ports answer each other forever.  (A REJECT is
 * answered, but only with a RESET, which ends it.) */
static bool answered_with_reset(unsigned opcode)
{
	switch (opcode) {
	case TRP_OP_DATA:
	case TRP_OP_SHUTDOWN:
	case TRP_OP_KEEPALIVE:
	case TRP_OP_CONNECT_ACCEPT:
	case TRP_OP_CONNECT_REJECT:
		return true;
	default:
		return false;
	}
}

bool trp_closed_port_answer(const void *pkt, size_t len, void *out)
{
	struct trp_header in, answer = { .version = TRP_VERSION };

	/* Only an intact packet is answered: a damaged one may name another
	 * connection than its sender's. */
	if (trp_header_decode(&in, pkt, len) != TRP_OK || !trp_checksum_ok(pkt, len))
		return false;
	answer.conn_id = in.conn_id;
	if (in.opcode == TRP_OP_CONNECT_REQUEST) {
		/* The requester takes a REJECT only if it acknowledges exactly
		 * its REQUEST (ack_psn = the REQUEST's PSN + 1) under its
		 * connection id.  Nothing is ever sent after it, so its own PSN
		 * is arbitrary. */
		answer.opcode = TRP_OP_CONNECT_REJECT;
		answer.ack_psn = in.psn + 1;
	} else if (answered_with_reset(in.opcode)) {
		/* The packet's own PSN, echoed: the receiver takes the RESET
		 * only for a PSN it has sent and not seen acknowledged, which a
		 * stranger who has not seen the connection's packets cannot
		 * name (conn.c, input_reset).  Acknowledges nothing. */
		answer.opcode = TRP_OP_RESET;
		answer.psn = in.psn;
	} else {
		return false;
	}
	trp_header_encode(&answer, out);
	/* Always checksummed: the receiver may require it. */
	trp_header_set_checksum(out, trp_checksum_finish(CRC32C_INIT, out));
	return true;
}
