#include "ddp-rdmap/placement.h"

#include "ddp-rdmap/segment.h"

enum rdmap_mr_status ddp_place_tagged(const struct rdmap_mr_ops *mr, void *mr_ctx, uint32_t stag,
				      uint64_t to, const void *src, uint32_t len, unsigned access)
{
	if (len == 0)
		return RDMAP_MR_OK;
	void *dst;
	enum rdmap_mr_status st = mr->lookup(mr_ctx, stag, to, len, access, &dst);
	if (st == RDMAP_MR_OK)
		mr->copy(dst, src, len);
	return st;
}

enum rdmap_mr_status ddp_place_sgl(const struct rdmap_mr_ops *mr, void *mr_ctx,
				   const struct rdmap_sge *sges, uint32_t num_sge, uint64_t off,
				   const void *src, uint32_t len)
{
	if (off + len > ddp_sgl_length(sges, num_sge))
		return RDMAP_MR_BOUNDS;

	const uint8_t *from = src;
	for (uint32_t i = 0; i < num_sge && len; i++) {
		if (off >= sges[i].length) {
			off -= sges[i].length;
			continue;
		}
		uint32_t n = sges[i].length - (uint32_t)off;
		if (n > len)
			n = len;
		void *dst;
		enum rdmap_mr_status st = mr->lookup(mr_ctx, sges[i].lkey, sges[i].addr + off, n,
						     RDMAP_ACCESS_LOCAL_WRITE, &dst);
		if (st != RDMAP_MR_OK)
			return st;
		mr->copy(dst, from, n);
		from += n;
		len -= n;
		off = 0;
	}
	return RDMAP_MR_OK;
}
