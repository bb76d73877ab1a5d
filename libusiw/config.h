/* The engine's configuration file: parsed into a plain struct, with no EAL
 * needed, so that parsing is testable on its own and every mistake is reported
 * before anything is started.  The keys are documented in docs/config.md. */
#ifndef USIW_CONFIG_H
#define USIW_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "usiw/usiw.h"

#define USIW_CONFIG_VALUE_MAX 256   /* rte_cfgfile's CFG_VALUE_LEN, with the NUL */
/* The largest [port] mtu: an IPv4 datagram's length is 16 bits, and a frame
 * of the MTU must fit one mbuf's 16-bit data room beside its headroom.
 * Above 9000 it is meant for memif, which has no wire (docs/config.md). */
#define USIW_MTU_MAX 65000

enum usiw_progress_mode {
	USIW_PROGRESS_INLINE,   /* the application's verbs calls poll the port */
	USIW_PROGRESS_THREAD,   /* an EAL worker lcore polls the port */
};

enum usiw_crc {
	USIW_CRC_AUTO,          /* off over memif, on over anything else */
	USIW_CRC_ON,
	USIW_CRC_OFF,
};

struct usiw_config {
	char path[4096];                      /* the file it came from, for messages */

	char eal_args[USIW_CONFIG_VALUE_MAX]; /* [eal] args */

	char device[USIW_CONFIG_VALUE_MAX];   /* [port] device: devargs or PCI address */
	uint32_t ipv4;                        /* network byte order */
	uint8_t prefix_len;
	bool mac_set;
	uint8_t mac[6];
	uint16_t mtu;                         /* IP MTU */
	uint16_t rx_ring;
	uint16_t tx_ring;
	uint16_t queues;
	uint32_t mbufs;
	uint32_t link_timeout_s;              /* 0: do not wait for link up */
	uint32_t arp_interval_ms;
	uint32_t arp_retries;
	bool gratuitous_arp;
	enum usiw_crc crc;                    /* [port] crc; see usiw_config_trp_crc */

	enum usiw_progress_mode progress;
	int lcore;                            /* thread mode; -1 = first worker lcore */
	uint32_t idle_sleep_us;               /* a progress thread's sleep when idle; 0 = never sleep */
	uint32_t idle_spin_us;                /* inline: the helper thread's busy-poll spell */
};

/* Whether the QPs' TRP connections compute and require CRC32C ([port] crc,
 * auto resolved by the device). */
bool usiw_config_trp_crc(const struct usiw_config *cfg);

/* Fills *cfg with every default. */
void usiw_config_defaults(struct usiw_config *cfg);

/* Reads and checks the file at path.  Returns 0, or -EINVAL / -ENOENT with a
 * message naming the file and the key in err. */
int usiw_config_parse(const char *path, struct usiw_config *cfg, char *err, size_t errlen);

/* The path the engine reads: $USIW_CONFIG, else the default path if it
 * exists.  Returns NULL with a message in err when there is none. */
const char *usiw_config_path(char *err, size_t errlen);

#endif
