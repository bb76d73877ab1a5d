/* The memif protocol, version 2.0, as DPDK's net_memif and libmemif speak
 * it: the messages of the control channel (a SOCK_SEQPACKET unix socket,
 * one 128-byte message per packet, file descriptors passed beside some of
 * them) and the rings in the shared regions.  Our own declarations, checked
 * against the sizes and offsets the protocol fixes; memif_port.c speaks it. */
#ifndef USIW_MEMIF_WIRE_H
#define USIW_MEMIF_WIRE_H

#include <stddef.h>
#include <stdint.h>

#define MEMIF_WIRE_VERSION 0x0200        /* major 2, minor 0 */
#define MEMIF_WIRE_COOKIE 0x3E31F20u     /* first word of every ring */
#define MEMIF_WIRE_NAME_LEN 32

enum memif_wire_msg_type {
	MEMIF_MSG_NONE,
	MEMIF_MSG_ACK,
	MEMIF_MSG_HELLO,         /* server -> client, on accept */
	MEMIF_MSG_INIT,          /* client -> server */
	MEMIF_MSG_ADD_REGION,    /* client -> server, the region's memfd beside it */
	MEMIF_MSG_ADD_RING,      /* client -> server, the ring's eventfd beside it */
	MEMIF_MSG_CONNECT,       /* client -> server */
	MEMIF_MSG_CONNECTED,     /* server -> client */
	MEMIF_MSG_DISCONNECT,    /* either way */
};

#define MEMIF_WIRE_MODE_ETHERNET 0
/* add_ring.flags: the ring carries frames from the client to the server
 * (C2S); without it, from the server to the client (S2C). */
#define MEMIF_WIRE_RING_C2S 1

struct __attribute__((packed)) memif_wire_hello {
	uint8_t name[MEMIF_WIRE_NAME_LEN];
	uint16_t min_version;
	uint16_t max_version;
	uint16_t max_region;          /* highest region index */
	uint16_t max_c2s_ring;        /* highest ring index */
	uint16_t max_s2c_ring;
	uint8_t max_log2_ring_size;
};

struct __attribute__((packed)) memif_wire_init {
	uint16_t version;
	uint32_t id;                  /* which of the server's interfaces */
	uint8_t mode;
	uint8_t secret[24];
	uint8_t name[MEMIF_WIRE_NAME_LEN];
};

struct __attribute__((packed)) memif_wire_add_region {
	uint16_t index;
	uint64_t size;
};

struct __attribute__((packed)) memif_wire_add_ring {
	uint16_t flags;
	uint16_t index;
	uint16_t region;
	uint32_t offset;              /* of the ring in its region */
	uint8_t log2_ring_size;
	uint16_t private_hdr_size;
};

struct __attribute__((packed)) memif_wire_connect {
	uint8_t if_name[MEMIF_WIRE_NAME_LEN];
};

struct __attribute__((packed)) memif_wire_disconnect {
	uint32_t code;
	uint8_t reason[96];
};

struct __attribute__((packed, aligned(128))) memif_wire_msg {
	uint16_t type;
	union __attribute__((packed)) {
		struct memif_wire_hello hello;
		struct memif_wire_init init;
		struct memif_wire_add_region add_region;
		struct memif_wire_add_ring add_ring;
		struct memif_wire_connect connect;
		struct memif_wire_disconnect disconnect;
	};
};

/* One buffer of a ring: where its bytes are, and how many.  A frame longer
 * than one buffer continues in the next descriptor (DESC_NEXT). */
#define MEMIF_WIRE_DESC_NEXT 1
struct memif_wire_desc {
	uint16_t flags;
	uint16_t region;
	uint32_t length;
	uint32_t offset;              /* of the buffer in its region */
	uint32_t metadata;
};

/* ring.flags: the receiver polls, so the sender signals no eventfd. */
#define MEMIF_WIRE_RING_NO_INTERRUPT 1

/* A ring: head and tail on cache lines of their own, then the descriptors.
 * C2S: the client fills slots [tail, head) and moves head; the server
 * empties them and moves tail.  S2C: the client hands empty buffers to the
 * server by moving head; the server fills [tail, head) and moves tail. */
struct memif_wire_ring {
	uint32_t cookie;
	uint16_t flags;
	uint16_t head;
	uint8_t pad0[56];
	uint16_t tail;
	uint8_t pad1[62];
	struct memif_wire_desc desc[];
};

_Static_assert(sizeof(struct memif_wire_msg) == 128, "a memif message is 128 bytes");
_Static_assert(offsetof(struct memif_wire_msg, hello) == 2, "the body follows the type");
_Static_assert(sizeof(struct memif_wire_hello) == 43, "hello");
_Static_assert(sizeof(struct memif_wire_init) == 63, "init");
_Static_assert(sizeof(struct memif_wire_add_ring) == 13, "add_ring");
_Static_assert(sizeof(struct memif_wire_desc) == 16, "a descriptor is 16 bytes");
_Static_assert(offsetof(struct memif_wire_ring, tail) == 64, "tail on the second line");
_Static_assert(offsetof(struct memif_wire_ring, desc) == 128, "descriptors on the third");

#endif
