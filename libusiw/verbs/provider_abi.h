/* The private provider ABI of libibverbs that usiw relies on, declared by us.
 *
 * libibverbs (rdma-core) lets a provider plug in through a private interface:
 * the provider hands it a table of device operations and a table of context
 * operations, and libibverbs' own entry points (ibv_open_device, ibv_alloc_pd,
 * ibv_create_cq, ...) call through those tables.  rdma-core declares this
 * interface in infiniband/driver.h, which distributions do not ship (Debian
 * does not), because it changes between releases: every incompatible change
 * bumps the symbol version IBVERBS_PRIVATE_<n> of the functions below.
 *
 * So this header declares exactly the parts usiw uses, written against the
 * layouts of rdma-core 44 (IBVERBS_PRIVATE_34, Debian bookworm).  Everything
 * public (struct ibv_device, ibv_context, verbs_context, ibv_mr, ...) comes
 * from <infiniband/verbs.h>.  tests/integration/verbs/abi_check.c checks these
 * declarations against the installed library: the symbols resolve at
 * USIW_IBVERBS_PRIVATE, and every operation we install is reached through the
 * public entry point that should reach it.  If libibverbs moves to another
 * IBVERBS_PRIVATE version, that test fails and this header must be revisited
 * against the new release's driver.h.
 */
#ifndef USIW_VERBS_PROVIDER_ABI_H
#define USIW_VERBS_PROVIDER_ABI_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

/* The symbol version of the private functions declared at the end. */
#define USIW_IBVERBS_PRIVATE "IBVERBS_PRIVATE_34"

/* Types the provider tables mention only through pointers: usiw never looks
 * inside them (they describe sysfs devices and PCI/modalias matching, which a
 * device that exists only in userspace has none of). */
struct verbs_sysfs_dev;
struct verbs_match_ent;

/* rdma-core 44 struct verbs_device_ops: how libibverbs matches a sysfs device
 * to a provider and asks the provider for a context.  usiw uses only
 * alloc_context (libibverbs' ibv_open_device calls it, with cmd_fd = -1 for a
 * device that has no sysfs entry); the other members stay NULL. */
struct verbs_device_ops {
	const char *name;
	uint32_t match_min_abi_version;
	uint32_t match_max_abi_version;
	const struct verbs_match_ent *match_table;
	const struct verbs_device_ops **static_providers;
	bool (*match_device)(struct verbs_sysfs_dev *sysfs_dev);
	struct verbs_context *(*alloc_context)(struct ibv_device *device,
					       int cmd_fd, void *private_data);
	struct verbs_context *(*import_context)(struct ibv_device *device,
						int cmd_fd);
	struct verbs_device *(*alloc_device)(struct verbs_sysfs_dev *sysfs_dev);
	void (*uninit_device)(struct verbs_device *device);
};

/* rdma-core's struct list_node (ccan/list.h): two pointers, which libibverbs
 * uses to keep its own devices on a list.  Ours is never put on it. */
struct usiw_ccan_list_node {
	struct usiw_ccan_list_node *next;
	struct usiw_ccan_list_node *prev;
};

/* rdma-core 44 struct verbs_device: the public ibv_device followed by
 * libibverbs' bookkeeping.  libibverbs finds it from an ibv_device by
 * container_of (device is first), reads ops to open a context, and counts
 * references in refcount (ibv_open_device holds, ibv_close_device puts; at zero
 * it would call ops->uninit_device).  sysfs = NULL marks a device with no
 * kernel counterpart, which is what makes ibv_open_device pass cmd_fd = -1. */
struct verbs_device {
	struct ibv_device device;
	const struct verbs_device_ops *ops;
	atomic_int refcount;
	struct usiw_ccan_list_node entry;
	struct verbs_sysfs_dev *sysfs;
	uint64_t core_support;
};

/* rdma-core 44 struct verbs_context_ops: every operation a provider may
 * implement, in rdma-core's (alphabetical) order.  verbs_set_ops() copies the
 * non-NULL members into the context; members left NULL keep libibverbs' own
 * defaults, which fail with EOPNOTSUPP.  The order and count must match
 * rdma-core 44 exactly, since verbs_set_ops reads the whole table. */
struct verbs_mr;
struct verbs_context_ops {
	int (*advise_mr)(struct ibv_pd *pd, enum ibv_advise_mr_advice advice,
			 uint32_t flags, struct ibv_sge *sg_list,
			 uint32_t num_sges);
	struct ibv_dm *(*alloc_dm)(struct ibv_context *context,
				   struct ibv_alloc_dm_attr *attr);
	struct ibv_mw *(*alloc_mw)(struct ibv_pd *pd, enum ibv_mw_type type);
	struct ibv_mr *(*alloc_null_mr)(struct ibv_pd *pd);
	struct ibv_pd *(*alloc_parent_domain)(
		struct ibv_context *context,
		struct ibv_parent_domain_init_attr *attr);
	struct ibv_pd *(*alloc_pd)(struct ibv_context *context);
	struct ibv_td *(*alloc_td)(struct ibv_context *context,
				   struct ibv_td_init_attr *init_attr);
	void (*async_event)(struct ibv_context *context,
			    struct ibv_async_event *event);
	int (*attach_counters_point_flow)(struct ibv_counters *counters,
					  struct ibv_counter_attach_attr *attr,
					  struct ibv_flow *flow);
	int (*attach_mcast)(struct ibv_qp *qp, const union ibv_gid *gid,
			    uint16_t lid);
	int (*bind_mw)(struct ibv_qp *qp, struct ibv_mw *mw,
		       struct ibv_mw_bind *mw_bind);
	int (*close_xrcd)(struct ibv_xrcd *xrcd);
	void (*cq_event)(struct ibv_cq *cq);
	struct ibv_ah *(*create_ah)(struct ibv_pd *pd, struct ibv_ah_attr *attr);
	struct ibv_counters *(*create_counters)(
		struct ibv_context *context,
		struct ibv_counters_init_attr *init_attr);
	struct ibv_cq *(*create_cq)(struct ibv_context *context, int cqe,
				    struct ibv_comp_channel *channel,
				    int comp_vector);
	struct ibv_cq_ex *(*create_cq_ex)(struct ibv_context *context,
					  struct ibv_cq_init_attr_ex *init_attr);
	struct ibv_flow *(*create_flow)(struct ibv_qp *qp,
					struct ibv_flow_attr *flow_attr);
	struct ibv_flow_action *(*create_flow_action_esp)(
		struct ibv_context *context,
		struct ibv_flow_action_esp_attr *attr);
	struct ibv_qp *(*create_qp)(struct ibv_pd *pd,
				    struct ibv_qp_init_attr *attr);
	struct ibv_qp *(*create_qp_ex)(struct ibv_context *context,
				       struct ibv_qp_init_attr_ex *attr);
	struct ibv_rwq_ind_table *(*create_rwq_ind_table)(
		struct ibv_context *context,
		struct ibv_rwq_ind_table_init_attr *init_attr);
	struct ibv_srq *(*create_srq)(struct ibv_pd *pd,
				      struct ibv_srq_init_attr *attr);
	struct ibv_srq *(*create_srq_ex)(struct ibv_context *context,
					 struct ibv_srq_init_attr_ex *attr);
	struct ibv_wq *(*create_wq)(struct ibv_context *context,
				    struct ibv_wq_init_attr *wq_init_attr);
	int (*dealloc_mw)(struct ibv_mw *mw);
	int (*dealloc_pd)(struct ibv_pd *pd);
	int (*dealloc_td)(struct ibv_td *td);
	int (*dereg_mr)(struct verbs_mr *vmr);
	int (*destroy_ah)(struct ibv_ah *ah);
	int (*destroy_counters)(struct ibv_counters *counters);
	int (*destroy_cq)(struct ibv_cq *cq);
	int (*destroy_flow)(struct ibv_flow *flow);
	int (*destroy_flow_action)(struct ibv_flow_action *action);
	int (*destroy_qp)(struct ibv_qp *qp);
	int (*destroy_rwq_ind_table)(struct ibv_rwq_ind_table *rwq_ind_table);
	int (*destroy_srq)(struct ibv_srq *srq);
	int (*destroy_wq)(struct ibv_wq *wq);
	int (*detach_mcast)(struct ibv_qp *qp, const union ibv_gid *gid,
			    uint16_t lid);
	void (*free_context)(struct ibv_context *context);
	int (*free_dm)(struct ibv_dm *dm);
	int (*get_srq_num)(struct ibv_srq *srq, uint32_t *srq_num);
	struct ibv_dm *(*import_dm)(struct ibv_context *context,
				    uint32_t dm_handle);
	struct ibv_mr *(*import_mr)(struct ibv_pd *pd, uint32_t mr_handle);
	struct ibv_pd *(*import_pd)(struct ibv_context *context,
				    uint32_t pd_handle);
	int (*modify_cq)(struct ibv_cq *cq, struct ibv_modify_cq_attr *attr);
	int (*modify_flow_action_esp)(struct ibv_flow_action *action,
				      struct ibv_flow_action_esp_attr *attr);
	int (*modify_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			 int attr_mask);
	int (*modify_qp_rate_limit)(struct ibv_qp *qp,
				    struct ibv_qp_rate_limit_attr *attr);
	int (*modify_srq)(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr,
			  int srq_attr_mask);
	int (*modify_wq)(struct ibv_wq *wq, struct ibv_wq_attr *wq_attr);
	struct ibv_qp *(*open_qp)(struct ibv_context *context,
				  struct ibv_qp_open_attr *attr);
	struct ibv_xrcd *(*open_xrcd)(struct ibv_context *context,
				      struct ibv_xrcd_init_attr *xrcd_init_attr);
	int (*poll_cq)(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
	int (*post_recv)(struct ibv_qp *qp, struct ibv_recv_wr *wr,
			 struct ibv_recv_wr **bad_wr);
	int (*post_send)(struct ibv_qp *qp, struct ibv_send_wr *wr,
			 struct ibv_send_wr **bad_wr);
	int (*post_srq_ops)(struct ibv_srq *srq, struct ibv_ops_wr *op,
			    struct ibv_ops_wr **bad_op);
	int (*post_srq_recv)(struct ibv_srq *srq, struct ibv_recv_wr *recv_wr,
			     struct ibv_recv_wr **bad_recv_wr);
	int (*query_device_ex)(struct ibv_context *context,
			       const struct ibv_query_device_ex_input *input,
			       struct ibv_device_attr_ex *attr,
			       size_t attr_size);
	int (*query_ece)(struct ibv_qp *qp, struct ibv_ece *ece);
	int (*query_port)(struct ibv_context *context, uint8_t port_num,
			  struct ibv_port_attr *port_attr);
	int (*query_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			int attr_mask, struct ibv_qp_init_attr *init_attr);
	int (*query_qp_data_in_order)(struct ibv_qp *qp, enum ibv_wr_opcode op,
				      uint32_t flags);
	int (*query_rt_values)(struct ibv_context *context,
			       struct ibv_values_ex *values);
	int (*query_srq)(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr);
	int (*read_counters)(struct ibv_counters *counters,
			     uint64_t *counters_value, uint32_t ncounters,
			     uint32_t flags);
	struct ibv_mr *(*reg_dm_mr)(struct ibv_pd *pd, struct ibv_dm *dm,
				    uint64_t dm_offset, size_t length,
				    unsigned int access);
	struct ibv_mr *(*reg_dmabuf_mr)(struct ibv_pd *pd, uint64_t offset,
					size_t length, uint64_t iova, int fd,
					int access);
	struct ibv_mr *(*reg_mr)(struct ibv_pd *pd, void *addr, size_t length,
				 uint64_t hca_va, int access);
	int (*req_notify_cq)(struct ibv_cq *cq, int solicited_only);
	int (*rereg_mr)(struct verbs_mr *vmr, int flags, struct ibv_pd *pd,
			void *addr, size_t length, int access);
	int (*resize_cq)(struct ibv_cq *cq, int cqe);
	int (*set_ece)(struct ibv_qp *qp, struct ibv_ece *ece);
	void (*unimport_dm)(struct ibv_dm *dm);
	void (*unimport_mr)(struct ibv_mr *mr);
	void (*unimport_pd)(struct ibv_pd *pd);
};

/* rdma-core 44 has 76 operations; a table of another size is not theirs. */
#define USIW_VERBS_CONTEXT_OPS_COUNT 76
_Static_assert(sizeof(struct verbs_context_ops) ==
		       USIW_VERBS_CONTEXT_OPS_COUNT * sizeof(void (*)(void)),
	       "verbs_context_ops must be exactly rdma-core 44's table");

/* rdma-core 44 enum ibv_mr_type, the kind of a verbs_mr. */
enum usiw_ibv_mr_type {
	USIW_IBV_MR_TYPE_MR = 0, /* an ordinary ibv_reg_mr region */
};

/* rdma-core 44 struct verbs_mr: the public ibv_mr followed by its kind and
 * access flags.  libibverbs' ibv_dereg_mr and ibv_rereg_mr read both through
 * container_of on every MR, so every MR a provider returns must be one. */
struct verbs_mr {
	struct ibv_mr ibv_mr;
	enum usiw_ibv_mr_type mr_type;
	int access;
};

/* rdma-core 44 struct verbs_qp: the public ibv_qp (or ibv_qp_ex) followed by
 * a mask saying which of them it is.  libibverbs' ibv_qp_to_qp_ex() reads that
 * mask behind every QP a provider returns, so each usiw QP starts with one;
 * comp_mask 0 says it is a plain ibv_qp (no ibv_wr_* API). */
struct verbs_xrcd;
struct verbs_qp {
	union {
		struct ibv_qp qp;
		struct ibv_qp_ex qp_ex;
	};
	uint32_t comp_mask;
	struct verbs_xrcd *xrcd;
};

/* rdma-core 44 enum ibv_gid_type_sysfs: what the private ibv_query_gid_type()
 * reports.  iWARP GIDs are of the first kind, as the kernel reports for
 * iWARP devices. */
enum ibv_gid_type_sysfs {
	IBV_GID_TYPE_SYSFS_IB_ROCE_V1,
	IBV_GID_TYPE_SYSFS_ROCE_V2,
};

/* rdma-core 44's private ibv_query_gid_type(), which ibv_devinfo calls and
 * usiw overrides (libibverbs' own reads the kernel's GID table). */
int ibv_query_gid_type(struct ibv_context *context, uint8_t port_num,
		       unsigned int index, enum ibv_gid_type_sysfs *type);

/* The record libibverbs' ibv_get_cq_event() reads from a completion channel's
 * fd (the kernel's struct ib_uverbs_comp_event_desc): the CQ that has an event,
 * as the pointer value libibverbs casts back to struct ibv_cq *. */
struct usiw_comp_event_record {
	uint64_t cq_handle;
};

/* Allocates alloc_size zeroed bytes, initialises the verbs_context found
 * context_offset bytes into them (context_offset is an offset disguised as a
 * pointer, as rdma-core's verbs_init_and_alloc_context macro computes it),
 * takes a reference on device, and installs libibverbs' default operations.
 * On failure returns NULL with errno set (and closes cmd_fd if it is not -1). */
void *_verbs_init_and_alloc_context(struct ibv_device *device, int cmd_fd,
				    size_t alloc_size,
				    struct verbs_context *context_offset,
				    uint32_t driver_id);

/* Undoes the above except the free: drops the device reference and
 * libibverbs' private part of the context. */
void verbs_uninit_context(struct verbs_context *context);

/* Installs the non-NULL members of ops into the context. */
void verbs_set_ops(struct verbs_context *vctx,
		   const struct verbs_context_ops *ops);

/* rdma-core's driver id for a provider matched by name, as ours would be. */
#define USIW_RDMA_DRIVER_UNKNOWN 0

#endif
