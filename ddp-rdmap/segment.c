#include "ddp-rdmap/segment.h"

uint64_t ddp_sgl_length(const struct rdmap_sge *sges, uint32_t num_sge)
{
	uint64_t len = 0;

	for (uint32_t i = 0; i < num_sge; i++)
		len += sges[i].length;
	return len;
}

void ddp_seg_cursor_init(struct ddp_seg_cursor *c, const struct rdmap_sge *sges, uint32_t num_sge,
			 uint64_t msg_len)
{
	*c = (struct ddp_seg_cursor){
		.sges = sges,
		.num_sge = num_sge,
		.msg_len = msg_len,
	};
}

void ddp_seg_cursor_peek(const struct ddp_seg_cursor *c, uint32_t max_len, struct ddp_seg_piece *p)
{
	uint32_t sge = c->sge;
	uint32_t sge_off = c->sge_off;

	/* empty SGEs carry nothing: skip them (and what is left of a used-up one) */
	while (sge < c->num_sge && sge_off == c->sges[sge].length) {
		sge++;
		sge_off = 0;
	}
	if (sge == c->num_sge) {  /* zero-length message */
		*p = (struct ddp_seg_piece){ .msg_off = c->msg_off, .last = true };
		return;
	}
	uint32_t avail = c->sges[sge].length - sge_off;
	p->addr = c->sges[sge].addr + sge_off;
	p->lkey = c->sges[sge].lkey;
	p->msg_off = c->msg_off;
	p->len = avail < max_len ? avail : max_len;
	p->last = c->msg_off + p->len == c->msg_len;
}

void ddp_seg_cursor_advance(struct ddp_seg_cursor *c, const struct ddp_seg_piece *p)
{
	if (p->len) {
		while (c->sge_off == c->sges[c->sge].length) {
			c->sge++;
			c->sge_off = 0;
		}
		c->sge_off += p->len;
	}
	c->msg_off += p->len;
	c->done = p->last;
}
