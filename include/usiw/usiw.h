/* usiw's public names: what applications, scripts and the library agree on.
 *
 * An application needs nothing from usiw beyond libibverbs and librdmacm;
 * these are the names by which a person or a program finds and configures a
 * usiw device. */
#ifndef USIW_USIW_H
#define USIW_USIW_H

/* The device as libibverbs lists it (ibv_get_device_name). */
#define USIW_DEVICE_NAME "usiw0"

/* The environment variable naming the configuration file (docs/config.md),
 * and the file read when it is not set. */
#define USIW_CONFIG_ENV "USIW_CONFIG"
#define USIW_CONFIG_DEFAULT_PATH "/etc/usiw/usiw.conf"

/* The environment variable setting DPDK's log level (default: error). */
#define USIW_LOG_ENV "USIW_LOG"

/* The environment variable slowing usiw's clock N times (for valgrind). */
#define USIW_CLOCK_SLOWDOWN_ENV "USIW_CLOCK_SLOWDOWN"

#endif
