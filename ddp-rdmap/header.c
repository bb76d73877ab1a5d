/* DDP/RDMAP wire codec; layouts in docs/protocol-ddp-rdmap.md. */
#include "ddp-rdmap/header.h"

#include <string.h>

#include "usiw/byteorder.h"

/* DDP control byte */
#define DDP_CTRL_TAGGED 0x80u
#define DDP_CTRL_LAST 0x40u
#define DDP_CTRL_VERSION_MASK 0x03u
/* RDMAP control byte */
#define RDMAP_CTRL_VERSION_SHIFT 6
#define RDMAP_CTRL_OPCODE_MASK 0x0fu
/* Terminate Control, third byte */
#define TERM_HDRCT_M 0x80u
#define TERM_HDRCT_D 0x40u
#define TERM_HDRCT_R 0x20u
/* Atomic Request: the operation code is the low nibble of the first word */
#define ATOMIC_OPCODE_MASK 0x0fu

static const struct rdmap_opcode_info opcode_table[RDMAP_OP_COUNT] = {
	[RDMAP_OP_WRITE] = { .tagged = true },
	[RDMAP_OP_READ_REQ] = { .qn = DDP_QN_READ_REQ, .single_segment = true,
				.fixed_len = RDMAP_READ_REQ_LEN },
	[RDMAP_OP_READ_RESP] = { .tagged = true },
	[RDMAP_OP_SEND] = { .qn = DDP_QN_SEND },
	[RDMAP_OP_SEND_INV] = { .qn = DDP_QN_SEND },
	[RDMAP_OP_SEND_SE] = { .qn = DDP_QN_SEND },
	[RDMAP_OP_SEND_SE_INV] = { .qn = DDP_QN_SEND },
	/* variable: the copied headers depend on the Terminate Control flags */
	[RDMAP_OP_TERMINATE] = { .qn = DDP_QN_TERMINATE, .single_segment = true },
	[RDMAP_OP_WRITE_IMM] = { .qn = DDP_QN_SEND, .single_segment = true,
				 .fixed_len = RDMAP_IMM_LEN },
	/* usiw lets Send payload follow the 8 immediate bytes: variable length */
	[RDMAP_OP_IMM_DATA] = { .qn = DDP_QN_SEND },
	[RDMAP_OP_IMM_DATA_SE] = { .qn = DDP_QN_SEND },
	[RDMAP_OP_ATOMIC_REQ] = { .qn = DDP_QN_READ_REQ, .single_segment = true,
				  .fixed_len = RDMAP_ATOMIC_REQ_LEN },
	[RDMAP_OP_ATOMIC_RESP] = { .qn = DDP_QN_ATOMIC_RESP, .single_segment = true,
				   .fixed_len = RDMAP_ATOMIC_RESP_LEN },
};

const struct rdmap_opcode_info *rdmap_opcode_info(enum rdmap_opcode op)
{
	return &opcode_table[op];
}

size_t ddp_hdr_len(bool tagged)
{
	return tagged ? DDP_TAGGED_HDR_LEN : DDP_UNTAGGED_HDR_LEN;
}

size_t ddp_payload_off(bool tagged)
{
	return tagged ? DDP_TAGGED_PAYLOAD_OFF : DDP_UNTAGGED_PAYLOAD_OFF;
}

size_t ddp_hdr_encode(const struct ddp_hdr *h, uint8_t *buf)
{
	size_t off = ddp_payload_off(h->tagged);

	memset(buf, 0, off);
	buf[0] = (uint8_t)((h->tagged ? DDP_CTRL_TAGGED : 0) | (h->last ? DDP_CTRL_LAST : 0) |
			   DDP_VERSION);
	buf[1] = (uint8_t)(RDMAP_VERSION << RDMAP_CTRL_VERSION_SHIFT | (h->opcode & RDMAP_CTRL_OPCODE_MASK));
	if (h->tagged) {
		put_be32(buf + 2, h->stag);
		put_be64(buf + 6, h->to);
	} else {
		if (h->opcode == RDMAP_OP_SEND_INV || h->opcode == RDMAP_OP_SEND_SE_INV)
			put_be32(buf + 2, h->inv_stag);
		put_be32(buf + 6, h->qn);
		put_be32(buf + 10, h->msn);
		put_be32(buf + 14, h->mo);
	}
	return off;
}

int ddp_hdr_parse(const uint8_t *hdr, size_t len, struct ddp_hdr *h)
{
	if (len < 2)
		return -DDP_ERR_TRUNCATED;
	/* The version is checked before anything else depends on the layout. */
	if ((hdr[0] & DDP_CTRL_VERSION_MASK) != DDP_VERSION)
		return -DDP_ERR_DDP_VERSION;
	if (hdr[1] >> RDMAP_CTRL_VERSION_SHIFT != RDMAP_VERSION)
		return -DDP_ERR_RDMAP_VERSION;

	memset(h, 0, sizeof(*h));
	h->tagged = hdr[0] & DDP_CTRL_TAGGED;
	h->last = hdr[0] & DDP_CTRL_LAST;
	if (len < ddp_hdr_len(h->tagged))
		return -DDP_ERR_TRUNCATED;

	unsigned op = hdr[1] & RDMAP_CTRL_OPCODE_MASK;
	if (op >= RDMAP_OP_COUNT)
		return -DDP_ERR_OPCODE;
	h->opcode = (enum rdmap_opcode)op;
	const struct rdmap_opcode_info *info = &opcode_table[op];
	if (info->tagged != h->tagged)
		return -DDP_ERR_TAGGED_FLAG;

	if (h->tagged) {
		h->stag = get_be32(hdr + 2);
		h->to = get_be64(hdr + 6);
		return 0;
	}
	if (h->opcode == RDMAP_OP_SEND_INV || h->opcode == RDMAP_OP_SEND_SE_INV)
		h->inv_stag = get_be32(hdr + 2);
	h->qn = get_be32(hdr + 6);
	h->msn = get_be32(hdr + 10);
	h->mo = get_be32(hdr + 14);
	if (h->qn != info->qn)
		return -DDP_ERR_QN;
	if (info->single_segment && (!h->last || h->mo != 0))
		return -DDP_ERR_SINGLE_SEGMENT;
	return 0;
}

int ddp_hdr_decode(const uint8_t *seg, size_t len, struct ddp_hdr *h)
{
	int err = ddp_hdr_parse(seg, len, h);
	if (err)
		return err;
	size_t off = ddp_payload_off(h->tagged);
	if (len < off)
		return -DDP_ERR_TRUNCATED;
	size_t fixed = opcode_table[h->opcode].fixed_len;
	if (fixed && len - off != fixed)
		return -DDP_ERR_LENGTH;
	return (int)off;
}

void rdmap_read_req_encode(const struct rdmap_read_req *r, uint8_t out[RDMAP_READ_REQ_LEN])
{
	put_be32(out, r->sink_stag);
	put_be64(out + 4, r->sink_to);
	put_be32(out + 12, r->size);
	put_be32(out + 16, r->src_stag);
	put_be64(out + 20, r->src_to);
}

int rdmap_read_req_decode(const uint8_t *p, size_t len, struct rdmap_read_req *r)
{
	if (len != RDMAP_READ_REQ_LEN)
		return -DDP_ERR_LENGTH;
	r->sink_stag = get_be32(p);
	r->sink_to = get_be64(p + 4);
	r->size = get_be32(p + 12);
	r->src_stag = get_be32(p + 16);
	r->src_to = get_be64(p + 20);
	return 0;
}

void rdmap_atomic_req_encode(const struct rdmap_atomic_req *a, uint8_t out[RDMAP_ATOMIC_REQ_LEN])
{
	put_be32(out, (uint32_t)a->op & ATOMIC_OPCODE_MASK);
	put_be32(out + 4, a->req_id);
	put_be32(out + 8, a->stag);
	put_be64(out + 12, a->to);
	put_be64(out + 20, a->add_swap);
	put_be64(out + 28, a->add_swap_mask);
	put_be64(out + 36, a->compare);
	put_be64(out + 44, a->compare_mask);
}

int rdmap_atomic_req_decode(const uint8_t *p, size_t len, struct rdmap_atomic_req *a)
{
	if (len != RDMAP_ATOMIC_REQ_LEN)
		return -DDP_ERR_LENGTH;
	unsigned op = p[3] & ATOMIC_OPCODE_MASK;
	if (op > RDMAP_ATOMIC_CMP_SWAP)
		return -DDP_ERR_FIELD;
	a->op = (enum rdmap_atomic_op)op;
	a->req_id = get_be32(p + 4);
	a->stag = get_be32(p + 8);
	a->to = get_be64(p + 12);
	a->add_swap = get_be64(p + 20);
	a->add_swap_mask = get_be64(p + 28);
	a->compare = get_be64(p + 36);
	a->compare_mask = get_be64(p + 44);
	return 0;
}

void rdmap_atomic_resp_encode(const struct rdmap_atomic_resp *a, uint8_t out[RDMAP_ATOMIC_RESP_LEN])
{
	put_be32(out, a->req_id);
	put_be64(out + 4, a->orig);
}

int rdmap_atomic_resp_decode(const uint8_t *p, size_t len, struct rdmap_atomic_resp *a)
{
	if (len != RDMAP_ATOMIC_RESP_LEN)
		return -DDP_ERR_LENGTH;
	a->req_id = get_be32(p);
	a->orig = get_be64(p + 4);
	return 0;
}

void rdmap_imm_encode(const struct rdmap_imm *i, uint8_t out[RDMAP_IMM_LEN])
{
	put_be32(out, i->imm);
	put_be32(out + 4, i->write_len);
}

int rdmap_imm_decode(const uint8_t *p, size_t len, struct rdmap_imm *i)
{
	if (len < RDMAP_IMM_LEN)
		return -DDP_ERR_TRUNCATED;
	i->imm = get_be32(p);
	i->write_len = get_be32(p + 4);
	return 0;
}

/* Length of the RDMAP header RFC 5040 copies into a Terminate after the DDP
 * header: only requests that a responder executes have one. */
static size_t copied_rdmap_hdr_len(const uint8_t *ddp_hdr)
{
	switch (ddp_hdr[1] & RDMAP_CTRL_OPCODE_MASK) {
	case RDMAP_OP_READ_REQ:
		return RDMAP_READ_REQ_LEN;
	case RDMAP_OP_ATOMIC_REQ:
		return RDMAP_ATOMIC_REQ_LEN;
	default:
		return 0;
	}
}

size_t rdmap_terminate_encode(const struct rdmap_terminate *t, uint8_t out[RDMAP_TERMINATE_MAX_LEN])
{
	size_t n = 0;

	out[n++] = (uint8_t)((t->layer & 0x0fu) << 4 | (t->etype & 0x0fu));
	out[n++] = t->ecode;
	out[n++] = (uint8_t)((t->seg_len_valid ? TERM_HDRCT_M : 0) |
			     (t->ddp_hdr_copied ? TERM_HDRCT_D : 0) |
			     (t->rdmap_hdr_copied ? TERM_HDRCT_R : 0));
	out[n++] = 0;
	if (t->seg_len_valid) {
		put_be16(out + n, t->seg_len);
		n += RDMAP_TERM_SEGLEN_LEN;
	}
	if (t->ddp_hdr_copied) {
		memcpy(out + n, t->ddp_hdr, t->ddp_hdr_len);
		n += t->ddp_hdr_len;
	}
	if (t->rdmap_hdr_copied) {
		memcpy(out + n, t->rdmap_hdr, t->rdmap_hdr_len);
		n += t->rdmap_hdr_len;
	}
	return n;
}

int rdmap_terminate_decode(const uint8_t *p, size_t len, struct rdmap_terminate *t)
{
	if (len < RDMAP_TERM_CTRL_LEN)
		return -DDP_ERR_TRUNCATED;
	memset(t, 0, sizeof(*t));
	t->layer = p[0] >> 4;
	t->etype = p[0] & 0x0fu;
	t->ecode = p[1];
	t->seg_len_valid = p[2] & TERM_HDRCT_M;
	t->ddp_hdr_copied = p[2] & TERM_HDRCT_D;
	t->rdmap_hdr_copied = p[2] & TERM_HDRCT_R;
	if (t->layer > TERM_LAYER_LLP)
		return -DDP_ERR_FIELD;
	/* the RDMAP header is only meaningful after the DDP header it belongs to */
	if (t->rdmap_hdr_copied && !t->ddp_hdr_copied)
		return -DDP_ERR_FIELD;

	size_t n = RDMAP_TERM_CTRL_LEN;
	if (t->seg_len_valid) {
		if (len - n < RDMAP_TERM_SEGLEN_LEN)
			return -DDP_ERR_TRUNCATED;
		t->seg_len = get_be16(p + n);
		n += RDMAP_TERM_SEGLEN_LEN;
	}
	if (t->ddp_hdr_copied) {
		if (len - n < 1)
			return -DDP_ERR_TRUNCATED;
		t->ddp_hdr_len = (uint8_t)ddp_hdr_len(p[n] & DDP_CTRL_TAGGED);
		if (len - n < t->ddp_hdr_len)
			return -DDP_ERR_TRUNCATED;
		memcpy(t->ddp_hdr, p + n, t->ddp_hdr_len);
		n += t->ddp_hdr_len;
	}
	if (t->rdmap_hdr_copied) {
		t->rdmap_hdr_len = (uint8_t)copied_rdmap_hdr_len(t->ddp_hdr);
		if (t->rdmap_hdr_len == 0)
			return -DDP_ERR_FIELD;
		if (len - n < t->rdmap_hdr_len)
			return -DDP_ERR_TRUNCATED;
		memcpy(t->rdmap_hdr, p + n, t->rdmap_hdr_len);
		n += t->rdmap_hdr_len;
	}
	if (n != len)
		return -DDP_ERR_LENGTH;
	return 0;
}
