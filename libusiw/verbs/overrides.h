/* The libibverbs functions the preload replaces, each with the symbol
 * version our replacement forwards to for devices that are not usiw0.
 *
 * They are the ones that, for a device with no kernel counterpart, would ask
 * the kernel (through sysfs, netlink or the uverbs command fd) rather than the
 * provider.  Everything else, ibv_open_device and ibv_close_device included,
 * libibverbs already routes to the provider's operations, so it stays theirs. */
#ifndef USIW_VERBS_OVERRIDES_H
#define USIW_VERBS_OVERRIDES_H

#define USIW_OVERRIDDEN_SYMBOLS(X)                                             \
	X(ibv_get_device_list, "IBVERBS_1.1")                                  \
	X(ibv_free_device_list, "IBVERBS_1.1")                                 \
	X(ibv_get_device_guid, "IBVERBS_1.1")                                  \
	X(ibv_query_gid, "IBVERBS_1.1")                                        \
	X(_ibv_query_gid_ex, "IBVERBS_1.11")                                   \
	X(_ibv_query_gid_table, "IBVERBS_1.11")                                \
	X(ibv_query_gid_type, "IBVERBS_PRIVATE_34")                            \
	X(ibv_query_pkey, "IBVERBS_1.1")                                       \
	X(ibv_get_pkey_index, "IBVERBS_1.5")                                   \
	X(ibv_create_comp_channel, "IBVERBS_1.0")                              \
	X(ibv_destroy_comp_channel, "IBVERBS_1.0")

#endif
