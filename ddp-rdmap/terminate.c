#include "ddp-rdmap/terminate.h"

#include <string.h>

struct term_code term_code_tagged_sink(enum rdmap_mr_status st)
{
	switch (st) {
	case RDMAP_MR_BOUNDS:
		return (struct term_code){ TERM_LAYER_DDP, TERM_DDP_ETYPE_TAGGED, TERM_DDP_T_BASE_BOUNDS };
	case RDMAP_MR_NOT_ASSOCIATED:
		return (struct term_code){ TERM_LAYER_DDP, TERM_DDP_ETYPE_TAGGED, TERM_DDP_T_STAG_NOT_ASSOCIATED };
	case RDMAP_MR_TO_WRAP:
		return (struct term_code){ TERM_LAYER_DDP, TERM_DDP_ETYPE_TAGGED, TERM_DDP_T_TO_WRAP };
	case RDMAP_MR_ACCESS:
		/* DDP has no access-rights code: access rights are RDMAP's */
		return (struct term_code){ TERM_LAYER_RDMAP, TERM_RDMAP_ETYPE_REMOTE_PROTECTION,
					   TERM_RDMAP_ACCESS_RIGHTS };
	default:
		return (struct term_code){ TERM_LAYER_DDP, TERM_DDP_ETYPE_TAGGED, TERM_DDP_T_INVALID_STAG };
	}
}

struct term_code term_code_rdmap_access(enum rdmap_mr_status st)
{
	static const uint8_t ecode[] = {
		[RDMAP_MR_INVALID_STAG] = TERM_RDMAP_INVALID_STAG,
		[RDMAP_MR_NOT_ASSOCIATED] = TERM_RDMAP_STAG_NOT_ASSOCIATED,
		[RDMAP_MR_ACCESS] = TERM_RDMAP_ACCESS_RIGHTS,
		[RDMAP_MR_BOUNDS] = TERM_RDMAP_BASE_BOUNDS,
		[RDMAP_MR_TO_WRAP] = TERM_RDMAP_TO_WRAP,
		[RDMAP_MR_CANNOT_INVALIDATE] = TERM_RDMAP_CANNOT_INVALIDATE,
	};
	uint8_t code = (unsigned)st < sizeof(ecode) && st != RDMAP_MR_OK ? ecode[st]
									 : TERM_RDMAP_UNSPECIFIED;
	return (struct term_code){ TERM_LAYER_RDMAP, TERM_RDMAP_ETYPE_REMOTE_PROTECTION, code };
}

struct term_code term_code_untagged(enum ddp_term_untagged_ecode ecode)
{
	return (struct term_code){ TERM_LAYER_DDP, TERM_DDP_ETYPE_UNTAGGED, (uint8_t)ecode };
}

struct term_code term_code_rdmap_op(enum rdmap_term_ecode ecode)
{
	return (struct term_code){ TERM_LAYER_RDMAP, TERM_RDMAP_ETYPE_REMOTE_OPERATION, (uint8_t)ecode };
}

struct term_code term_code_malformed(int err, const uint8_t *seg, size_t len)
{
	bool tagged = len > 0 && (seg[0] & 0x80u);

	switch (-err) {
	case DDP_ERR_DDP_VERSION:
		return tagged ? (struct term_code){ TERM_LAYER_DDP, TERM_DDP_ETYPE_TAGGED,
						    TERM_DDP_T_INVALID_VERSION }
			      : term_code_untagged(TERM_DDP_U_INVALID_VERSION);
	case DDP_ERR_RDMAP_VERSION:
		return term_code_rdmap_op(TERM_RDMAP_INVALID_VERSION);
	case DDP_ERR_OPCODE:
	case DDP_ERR_TAGGED_FLAG:
		return term_code_rdmap_op(TERM_RDMAP_UNEXPECTED_OPCODE);
	case DDP_ERR_QN:
		return term_code_untagged(TERM_DDP_U_INVALID_QN);
	case DDP_ERR_SINGLE_SEGMENT:
		return term_code_untagged(TERM_DDP_U_INVALID_MO);
	case DDP_ERR_TRUNCATED:
		return (struct term_code){ TERM_LAYER_DDP, TERM_DDP_ETYPE_CATASTROPHIC, 0 };
	default:  /* wrong fixed length, forbidden field value */
		return term_code_rdmap_op(TERM_RDMAP_UNSPECIFIED);
	}
}

void term_build(struct rdmap_terminate *t, struct term_code code, const uint8_t *seg, size_t len)
{
	memset(t, 0, sizeof(*t));
	t->layer = code.layer;
	t->etype = code.etype;
	t->ecode = code.ecode;
	if (!seg || len < 1)
		return;
	t->seg_len_valid = true;
	t->seg_len = len > UINT16_MAX ? UINT16_MAX : (uint16_t)len;
	size_t hlen = ddp_hdr_len(seg[0] & 0x80u);
	if (len < hlen)
		return;
	t->ddp_hdr_copied = true;
	t->ddp_hdr_len = (uint8_t)hlen;
	memcpy(t->ddp_hdr, seg, hlen);

	/* Requests the responder executes are identified by their RDMAP header. */
	struct ddp_hdr h;
	if (ddp_hdr_parse(seg, len, &h) != 0 || h.tagged)
		return;
	size_t rlen = h.opcode == RDMAP_OP_READ_REQ ? RDMAP_READ_REQ_LEN
		    : h.opcode == RDMAP_OP_ATOMIC_REQ ? RDMAP_ATOMIC_REQ_LEN : 0;
	if (rlen && len >= DDP_UNTAGGED_PAYLOAD_OFF + rlen) {
		t->rdmap_hdr_copied = true;
		t->rdmap_hdr_len = (uint8_t)rlen;
		memcpy(t->rdmap_hdr, seg + DDP_UNTAGGED_PAYLOAD_OFF, rlen);
	}
}

enum rdmap_wc_status term_wc_status(const struct rdmap_terminate *t)
{
	if (t->layer == TERM_LAYER_RDMAP) {
		if (t->etype == TERM_RDMAP_ETYPE_REMOTE_PROTECTION)
			return RDMAP_WC_REM_ACCESS_ERR;
		if (t->etype == TERM_RDMAP_ETYPE_REMOTE_OPERATION &&
		    (t->ecode == TERM_RDMAP_INVALID_VERSION || t->ecode == TERM_RDMAP_UNEXPECTED_OPCODE ||
		     t->ecode == TERM_RDMAP_UNSPECIFIED))
			return RDMAP_WC_REM_INV_REQ_ERR;
		return RDMAP_WC_REM_OP_ERR;
	}
	if (t->layer == TERM_LAYER_DDP) {
		if (t->etype == TERM_DDP_ETYPE_TAGGED)
			return RDMAP_WC_REM_ACCESS_ERR;
		if (t->etype == TERM_DDP_ETYPE_UNTAGGED && t->ecode == TERM_DDP_U_TOO_LONG)
			return RDMAP_WC_REM_INV_REQ_ERR;
	}
	return RDMAP_WC_REM_OP_ERR;
}
