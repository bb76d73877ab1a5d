/* CRC32C (Castagnoli), the end-to-end checksum of TRP datagrams. */
#ifndef USIW_TRP_CRC32C_H
#define USIW_TRP_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* Running state: start with CRC32C_INIT, feed bytes, finish. */
#define CRC32C_INIT 0xffffffffu

uint32_t crc32c_update(uint32_t state, const void *buf, size_t len);

static inline uint32_t crc32c_final(uint32_t state)
{
	return ~state;
}

#endif
