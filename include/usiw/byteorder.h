/* Big-endian loads and stores on byte buffers of any alignment, for the
 * wire headers of TRP and DDP/RDMAP.  Each is a byte swap and one unaligned
 * move: gcc did not merge a byte-at-a-time form into that, and the three
 * 32-bit fields of a DDP header took ~36 instructions.  (endian.h's htobe32
 * needs _DEFAULT_SOURCE, which the pure layers' C11 builds do not set.) */
#ifndef USIW_BYTEORDER_H
#define USIW_BYTEORDER_H

#include <stdint.h>
#include <string.h>

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define USIW_SWAP16(v) __builtin_bswap16(v)
#define USIW_SWAP32(v) __builtin_bswap32(v)
#define USIW_SWAP64(v) __builtin_bswap64(v)
#else
#define USIW_SWAP16(v) (v)
#define USIW_SWAP32(v) (v)
#define USIW_SWAP64(v) (v)
#endif

static inline void put_be16(uint8_t *p, uint16_t v)
{
	v = USIW_SWAP16(v);
	memcpy(p, &v, sizeof(v));
}

static inline void put_be32(uint8_t *p, uint32_t v)
{
	v = USIW_SWAP32(v);
	memcpy(p, &v, sizeof(v));
}

static inline void put_be64(uint8_t *p, uint64_t v)
{
	v = USIW_SWAP64(v);
	memcpy(p, &v, sizeof(v));
}

static inline uint16_t get_be16(const uint8_t *p)
{
	uint16_t v;
	memcpy(&v, p, sizeof(v));
	return USIW_SWAP16(v);
}

static inline uint32_t get_be32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, sizeof(v));
	return USIW_SWAP32(v);
}

static inline uint64_t get_be64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, sizeof(v));
	return USIW_SWAP64(v);
}

#endif
