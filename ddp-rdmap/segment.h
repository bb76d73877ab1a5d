/* Segmentation: cutting a message described by an SGE list into DDP segments.
 *
 * A segment never spans two SGEs: the transport references each segment's
 * payload as one contiguous range of registered memory (zero copy), so an SGE
 * boundary ends a segment early.  A zero-length message is one empty segment.
 */
#ifndef USIW_DDP_RDMAP_SEGMENT_H
#define USIW_DDP_RDMAP_SEGMENT_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "ddp-rdmap/wr.h"

struct ddp_seg_cursor {
	const struct rdmap_sge *sges;
	uint32_t num_sge;
	uint32_t sge;        /* current SGE */
	uint32_t sge_off;    /* bytes of it already segmented */
	uint64_t msg_off;    /* bytes of the message already segmented */
	uint64_t msg_len;
	bool done;           /* the Last segment has been taken */
};

/* One segment's payload: msg_off is its offset in the message (MO, or TO
 * relative to the message's base). */
struct ddp_seg_piece {
	uint64_t addr;
	uint32_t lkey;
	uint32_t len;
	uint64_t msg_off;
	bool last;
};

uint64_t ddp_sgl_length(const struct rdmap_sge *sges, uint32_t num_sge);

/* A WR's SGE list into its queue entry.  One SGE, nearly every WR's, is
 * assigned: memcpy's call for its 16 bytes took ~10 instructions, twice per
 * ping-pong message (the Send and the Receive). */
static inline void ddp_sgl_copy(struct rdmap_sge *dst, const struct rdmap_sge *src, uint32_t num_sge)
{
	if (num_sge == 1)
		dst[0] = src[0];
	else if (num_sge)
		memcpy(dst, src, num_sge * sizeof(*dst));
}

/* msg_len: the SGEs' total (ddp_sgl_length), which the caller has already
 * summed to check the message. */
void ddp_seg_cursor_init(struct ddp_seg_cursor *c, const struct rdmap_sge *sges, uint32_t num_sge,
			 uint64_t msg_len);
/* The next segment of at most max_len bytes, without consuming it (the
 * transport may refuse it).  Must not be called once c->done. */
void ddp_seg_cursor_peek(const struct ddp_seg_cursor *c, uint32_t max_len, struct ddp_seg_piece *p);
/* Consumes the piece returned by the last peek. */
void ddp_seg_cursor_advance(struct ddp_seg_cursor *c, const struct ddp_seg_piece *p);

#endif
