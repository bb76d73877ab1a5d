/* Terminate codes (RFC 5040 section 7.2, RFC 5041 section 7.2), how usiw
 * chooses them for each failure, and how a received Terminate becomes the
 * status of the work request it names. */
#ifndef USIW_DDP_RDMAP_TERMINATE_H
#define USIW_DDP_RDMAP_TERMINATE_H

#include <stddef.h>
#include <stdint.h>

#include "ddp-rdmap/header.h"
#include "ddp-rdmap/mr.h"
#include "ddp-rdmap/wr.h"

enum rdmap_term_etype {
	TERM_RDMAP_ETYPE_LOCAL_CATASTROPHIC = 0x0,
	TERM_RDMAP_ETYPE_REMOTE_PROTECTION = 0x1,
	TERM_RDMAP_ETYPE_REMOTE_OPERATION = 0x2,
};

enum rdmap_term_ecode {
	TERM_RDMAP_INVALID_STAG = 0x00,
	TERM_RDMAP_BASE_BOUNDS = 0x01,
	TERM_RDMAP_ACCESS_RIGHTS = 0x02,
	TERM_RDMAP_STAG_NOT_ASSOCIATED = 0x03,
	TERM_RDMAP_TO_WRAP = 0x04,
	TERM_RDMAP_INVALID_VERSION = 0x05,
	TERM_RDMAP_UNEXPECTED_OPCODE = 0x06,
	TERM_RDMAP_CATASTROPHIC_STREAM = 0x07,
	TERM_RDMAP_CATASTROPHIC_GLOBAL = 0x08,
	TERM_RDMAP_CANNOT_INVALIDATE = 0x09,
	TERM_RDMAP_UNSPECIFIED = 0xff,
};

enum ddp_term_etype {
	TERM_DDP_ETYPE_CATASTROPHIC = 0x0,
	TERM_DDP_ETYPE_TAGGED = 0x1,
	TERM_DDP_ETYPE_UNTAGGED = 0x2,
};

enum ddp_term_tagged_ecode {
	TERM_DDP_T_INVALID_STAG = 0x00,
	TERM_DDP_T_BASE_BOUNDS = 0x01,
	TERM_DDP_T_STAG_NOT_ASSOCIATED = 0x02,
	TERM_DDP_T_TO_WRAP = 0x03,
	TERM_DDP_T_INVALID_VERSION = 0x04,
};

enum ddp_term_untagged_ecode {
	TERM_DDP_U_INVALID_QN = 0x01,
	TERM_DDP_U_NO_BUFFER = 0x02,
	TERM_DDP_U_MSN_RANGE = 0x03,
	TERM_DDP_U_INVALID_MO = 0x04,
	TERM_DDP_U_TOO_LONG = 0x05,
	TERM_DDP_U_INVALID_VERSION = 0x06,
};

struct term_code {
	uint8_t layer;
	uint8_t etype;
	uint8_t ecode;
};

/* A tagged segment (RDMA Write, Read Response) refused at its data sink. */
struct term_code term_code_tagged_sink(enum rdmap_mr_status st);
/* A Read source or atomic target refused at the responder, or an
 * invalidation refused: RDMAP remote protection errors. */
struct term_code term_code_rdmap_access(enum rdmap_mr_status st);
/* A segment ddp_hdr_decode() or a payload decoder rejected with err. */
struct term_code term_code_malformed(int err, const uint8_t *seg, size_t len);
struct term_code term_code_untagged(enum ddp_term_untagged_ecode ecode);
struct term_code term_code_rdmap_op(enum rdmap_term_ecode ecode);

/* Fills a Terminate for code, copying the offending segment's headers when
 * seg is not NULL. */
void term_build(struct rdmap_terminate *t, struct term_code code, const uint8_t *seg, size_t len);

/* The completion status of the work request a received Terminate blames. */
enum rdmap_wc_status term_wc_status(const struct rdmap_terminate *t);

#endif
