/* DDP (RFC 5041) and RDMAP (RFC 5040, RFC 7306) wire codec.
 *
 * Every field is encoded and decoded byte by byte in network order; no
 * struct is ever overlaid on a packet.  The byte layouts are drawn in
 * docs/protocol-ddp-rdmap.md.  Each decode function checks lengths, versions,
 * opcodes and flag combinations and returns a negative enum ddp_decode_error
 * for malformed input.
 */
#ifndef USIW_DDP_RDMAP_HEADER_H
#define USIW_DDP_RDMAP_HEADER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
	DDP_VERSION = 1,
	RDMAP_VERSION = 1,
};

/* Bytes of the DDP headers as RFC 5041 defines them (control byte, RDMAP
 * control byte, then the tagged or untagged fields). */
#define DDP_TAGGED_HDR_LEN 14u
#define DDP_UNTAGGED_HDR_LEN 18u
/* Without MPA the DDP header is followed by zero padding up to the next
 * multiple of 8 bytes, so that the DDP payload of every segment starts
 * 8-byte aligned in the packet (the header itself starts 8-byte aligned). */
#define DDP_TAGGED_PAYLOAD_OFF 16u
#define DDP_UNTAGGED_PAYLOAD_OFF 24u
#define DDP_MAX_PAYLOAD_OFF DDP_UNTAGGED_PAYLOAD_OFF

/* Lengths of the RDMAP headers carried as DDP payload of untagged messages. */
#define RDMAP_READ_REQ_LEN 28u
#define RDMAP_ATOMIC_REQ_LEN 52u
#define RDMAP_ATOMIC_RESP_LEN 12u
#define RDMAP_IMM_LEN 8u
#define RDMAP_TERM_CTRL_LEN 4u
#define RDMAP_TERM_SEGLEN_LEN 2u
#define RDMAP_TERMINATE_MAX_LEN \
	(RDMAP_TERM_CTRL_LEN + RDMAP_TERM_SEGLEN_LEN + DDP_UNTAGGED_HDR_LEN + RDMAP_ATOMIC_REQ_LEN)

/* RDMAP opcodes: 0..7 from RFC 5040, 8..12 from RFC 7306. */
enum rdmap_opcode {
	RDMAP_OP_WRITE = 0x0,
	RDMAP_OP_READ_REQ = 0x1,
	RDMAP_OP_READ_RESP = 0x2,
	RDMAP_OP_SEND = 0x3,
	RDMAP_OP_SEND_INV = 0x4,
	RDMAP_OP_SEND_SE = 0x5,
	RDMAP_OP_SEND_SE_INV = 0x6,
	RDMAP_OP_TERMINATE = 0x7,
	RDMAP_OP_WRITE_IMM = 0x8,
	RDMAP_OP_IMM_DATA = 0x9,
	RDMAP_OP_IMM_DATA_SE = 0xa,
	RDMAP_OP_ATOMIC_REQ = 0xb,
	RDMAP_OP_ATOMIC_RESP = 0xc,
	RDMAP_OP_COUNT = 0xd,
};

/* Untagged queue numbers. */
enum ddp_queue {
	DDP_QN_SEND = 0,        /* Send family, Immediate Data */
	DDP_QN_READ_REQ = 1,    /* RDMA Read Requests and Atomic Requests */
	DDP_QN_TERMINATE = 2,
	DDP_QN_ATOMIC_RESP = 3,
};

enum ddp_decode_error {
	DDP_ERR_TRUNCATED = 1,    /* shorter than its header or fixed payload */
	DDP_ERR_DDP_VERSION,
	DDP_ERR_RDMAP_VERSION,
	DDP_ERR_OPCODE,           /* reserved RDMAP opcode */
	DDP_ERR_TAGGED_FLAG,      /* T flag contradicts the opcode */
	DDP_ERR_QN,               /* queue number contradicts the opcode */
	DDP_ERR_SINGLE_SEGMENT,   /* control message not one whole segment (L=0 or MO!=0) */
	DDP_ERR_LENGTH,           /* fixed-size payload of the wrong size */
	DDP_ERR_FIELD,            /* a field holds a value the protocol forbids */
};

/* One DDP segment header together with the RDMAP control byte it carries. */
struct ddp_hdr {
	bool tagged;
	bool last;
	enum rdmap_opcode opcode;
	/* tagged segments */
	uint32_t stag;
	uint64_t to;
	/* untagged segments */
	uint32_t inv_stag;  /* Send with Invalidate only, reserved otherwise */
	uint32_t qn;
	uint32_t msn;
	uint32_t mo;
};

struct rdmap_opcode_info {
	bool tagged;
	uint8_t qn;              /* untagged only */
	bool single_segment;     /* control messages: exactly one segment, MO 0 */
	uint8_t fixed_len;       /* exact DDP payload length, 0 if variable */
};

/* Properties of a valid opcode (opcode < RDMAP_OP_COUNT). */
const struct rdmap_opcode_info *rdmap_opcode_info(enum rdmap_opcode op);
/* Tagged or untagged DDP header length (14 or 18) and payload offset (16 or 24). */
size_t ddp_hdr_len(bool tagged);
size_t ddp_payload_off(bool tagged);

/* Writes the header and its zero padding; returns the payload offset.
 * buf must hold ddp_payload_off(h->tagged) bytes. */
size_t ddp_hdr_encode(const struct ddp_hdr *h, uint8_t *buf);
/* Decodes the DDP header fields alone (len >= 14 or 18), as copied into a
 * Terminate: versions, opcode, T flag, QN and the single-segment rule. */
int ddp_hdr_parse(const uint8_t *hdr, size_t len, struct ddp_hdr *h);
/* Decodes a whole segment's header, also checking the padding is present and
 * fixed-size payloads have their size; on success returns the payload offset. */
int ddp_hdr_decode(const uint8_t *seg, size_t len, struct ddp_hdr *h);

struct rdmap_read_req {
	uint32_t sink_stag;
	uint64_t sink_to;
	uint32_t size;
	uint32_t src_stag;
	uint64_t src_to;
};
void rdmap_read_req_encode(const struct rdmap_read_req *r, uint8_t out[RDMAP_READ_REQ_LEN]);
int rdmap_read_req_decode(const uint8_t *p, size_t len, struct rdmap_read_req *r);

enum rdmap_atomic_op {
	RDMAP_ATOMIC_FETCH_ADD = 0x0,
	RDMAP_ATOMIC_SWAP = 0x1,
	RDMAP_ATOMIC_CMP_SWAP = 0x2,
};

struct rdmap_atomic_req {
	enum rdmap_atomic_op op;
	uint32_t req_id;
	uint32_t stag;
	uint64_t to;
	uint64_t add_swap;
	uint64_t add_swap_mask;
	uint64_t compare;
	uint64_t compare_mask;
};
void rdmap_atomic_req_encode(const struct rdmap_atomic_req *a, uint8_t out[RDMAP_ATOMIC_REQ_LEN]);
int rdmap_atomic_req_decode(const uint8_t *p, size_t len, struct rdmap_atomic_req *a);

struct rdmap_atomic_resp {
	uint32_t req_id;
	uint64_t orig;
};
void rdmap_atomic_resp_encode(const struct rdmap_atomic_resp *a, uint8_t out[RDMAP_ATOMIC_RESP_LEN]);
int rdmap_atomic_resp_decode(const uint8_t *p, size_t len, struct rdmap_atomic_resp *a);

/* The 8-byte Immediate Data field.  Verbs immediate data is 32 bits and takes
 * the first word; the second word is reserved (zero) except in usiw's
 * RDMA-Write-with-Immediate message, where it carries the Write's length. */
struct rdmap_imm {
	uint32_t imm;
	uint32_t write_len;
};
void rdmap_imm_encode(const struct rdmap_imm *i, uint8_t out[RDMAP_IMM_LEN]);
int rdmap_imm_decode(const uint8_t *p, size_t len, struct rdmap_imm *i);

/* Terminate Control layers and error types (RFC 5040 section 7). */
enum rdmap_term_layer {
	TERM_LAYER_RDMAP = 0x0,
	TERM_LAYER_DDP = 0x1,
	TERM_LAYER_LLP = 0x2,
};

struct rdmap_terminate {
	uint8_t layer;   /* enum rdmap_term_layer */
	uint8_t etype;
	uint8_t ecode;
	bool seg_len_valid;   /* M: the DDP Segment Length field is present */
	bool ddp_hdr_copied;  /* D: the terminated DDP header is present */
	bool rdmap_hdr_copied;/* R: the terminated RDMAP header is present */
	uint16_t seg_len;
	uint8_t ddp_hdr[DDP_UNTAGGED_HDR_LEN];
	uint8_t ddp_hdr_len;
	uint8_t rdmap_hdr[RDMAP_ATOMIC_REQ_LEN];
	uint8_t rdmap_hdr_len;
};
/* Returns the encoded length (at most RDMAP_TERMINATE_MAX_LEN). */
size_t rdmap_terminate_encode(const struct rdmap_terminate *t, uint8_t out[RDMAP_TERMINATE_MAX_LEN]);
int rdmap_terminate_decode(const uint8_t *p, size_t len, struct rdmap_terminate *t);

#endif
