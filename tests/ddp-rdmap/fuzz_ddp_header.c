/* libFuzzer: every decoder of the wire codec on arbitrary bytes.  A decode
 * that succeeds must re-encode to the same header. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ddp-rdmap/header.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ddp_hdr h;
	int off = ddp_hdr_decode(data, size, &h);
	if (off >= 0) {
		uint8_t again[DDP_MAX_PAYLOAD_OFF];
		if ((size_t)off != ddp_hdr_encode(&h, again))
			abort();
		struct ddp_hdr h2;
		if (ddp_hdr_decode(again, (size_t)off + rdmap_opcode_info(h.opcode)->fixed_len, &h2) != off ||
		    memcmp(&h, &h2, sizeof(h)) != 0)
			abort();
	}
	struct rdmap_read_req rr;
	rdmap_read_req_decode(data, size, &rr);
	struct rdmap_atomic_req ar;
	rdmap_atomic_req_decode(data, size, &ar);
	struct rdmap_atomic_resp as;
	rdmap_atomic_resp_decode(data, size, &as);
	struct rdmap_imm imm;
	rdmap_imm_decode(data, size, &imm);
	struct rdmap_terminate t;
	if (rdmap_terminate_decode(data, size, &t) == 0) {
		uint8_t again[RDMAP_TERMINATE_MAX_LEN];
		size_t n = rdmap_terminate_encode(&t, again);
		/* the reserved bits are not kept: compare what the fields hold */
		if (n != size || again[0] != data[0] || again[1] != data[1] ||
		    memcmp(again + 4, data + 4, n - 4) != 0)
			abort();
	}
	return 0;
}
