/* libFuzzer target: decode arbitrary bytes as a TRP header.  Whatever the
 * input, decoding must not crash, and a header that decodes must re-encode
 * to the same 30 bytes. */
#include "trp/trp.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct trp_header h;
	uint8_t again[TRP_HDR_LEN];

	(void)trp_checksum_ok(data, size);
	if (trp_header_decode(&h, data, size) != TRP_OK)
		return 0;
	trp_header_encode(&h, again);
	if (memcmp(again, data, TRP_HDR_LEN) != 0)
		abort();
	(void)trp_opcode_name(h.opcode);
	return 0;
}
