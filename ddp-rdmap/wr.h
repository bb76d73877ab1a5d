/* Work requests and work completions of the RDMAP endpoint.  The verbs layer
 * translates ibv_send_wr / ibv_recv_wr into these and rdmap_wc into ibv_wc. */
#ifndef USIW_DDP_RDMAP_WR_H
#define USIW_DDP_RDMAP_WR_H

#include <stdint.h>

/* A local buffer: addr is the address the MR was registered at (verbs' VA
 * based tagged offsets), lkey its STag. */
struct rdmap_sge {
	uint64_t addr;
	uint32_t length;
	uint32_t lkey;
};

enum rdmap_wr_opcode {
	RDMAP_WR_SEND,
	RDMAP_WR_SEND_WITH_INV,
	RDMAP_WR_SEND_WITH_IMM,
	RDMAP_WR_RDMA_WRITE,
	RDMAP_WR_RDMA_WRITE_WITH_IMM,
	RDMAP_WR_RDMA_READ,
	RDMAP_WR_ATOMIC_FETCH_ADD,
	RDMAP_WR_ATOMIC_CMP_SWP,
};

enum rdmap_send_flags {
	RDMAP_SEND_SIGNALED = 1u << 0,
	RDMAP_SEND_SOLICITED = 1u << 1,
	RDMAP_SEND_INLINE = 1u << 2,  /* copy the SGEs' bytes at post time */
	RDMAP_SEND_FENCE = 1u << 3,   /* wait for earlier Reads/atomics to complete */
};

struct rdmap_send_wr {
	uint64_t wr_id;
	enum rdmap_wr_opcode opcode;
	unsigned flags;                /* enum rdmap_send_flags */
	const struct rdmap_sge *sg_list;
	uint32_t num_sge;
	uint32_t imm_data;             /* *_WITH_IMM */
	uint32_t invalidate_stag;      /* SEND_WITH_INV */
	uint64_t remote_addr;          /* RDMA and atomic: remote tagged offset */
	uint32_t rkey;                 /* RDMA and atomic: remote STag */
	uint64_t compare_add;          /* FETCH_ADD: addend; CMP_SWP: compare */
	uint64_t swap;                 /* CMP_SWP: new value */
};

struct rdmap_recv_wr {
	uint64_t wr_id;
	const struct rdmap_sge *sg_list;
	uint32_t num_sge;
};

enum rdmap_wc_status {
	RDMAP_WC_SUCCESS,
	RDMAP_WC_LOC_LEN_ERR,      /* received message longer than the receive buffers */
	RDMAP_WC_LOC_PROT_ERR,     /* a local SGE or Read sink failed its MR check */
	RDMAP_WC_LOC_QP_OP_ERR,    /* the peer broke the protocol (malformed or unexpected segment) */
	RDMAP_WC_REM_ACCESS_ERR,   /* the peer refused a tagged access (Terminate, protection) */
	RDMAP_WC_REM_OP_ERR,       /* the peer failed the operation (Terminate, operation) */
	RDMAP_WC_REM_INV_REQ_ERR,  /* the peer found the request invalid (too long, misaligned) */
	RDMAP_WC_WR_FLUSH_ERR,     /* flushed because the endpoint went to error */
	RDMAP_WC_RETRY_EXC_ERR,    /* the transport gave up */
	RDMAP_WC_RNR_RETRY_EXC_ERR, /* the peer had no receive posted through every retry */
	RDMAP_WC_FATAL_ERR,        /* local catastrophic error, peer dead */
};

enum rdmap_wc_opcode {
	RDMAP_WC_SEND,
	RDMAP_WC_RDMA_WRITE,
	RDMAP_WC_RDMA_READ,
	RDMAP_WC_FETCH_ADD,
	RDMAP_WC_COMP_SWAP,
	RDMAP_WC_RECV,
	RDMAP_WC_RECV_RDMA_WITH_IMM,
};

enum rdmap_wc_flags {
	RDMAP_WC_WITH_IMM = 1u << 0,
	RDMAP_WC_WITH_INV = 1u << 1,
	RDMAP_WC_SOLICITED = 1u << 2,
};

struct rdmap_wc {
	uint64_t wr_id;
	enum rdmap_wc_opcode opcode;
	enum rdmap_wc_status status;
	uint32_t byte_len;
	uint32_t imm_data;
	uint32_t invalidated_stag;   /* with RDMAP_WC_WITH_INV */
	unsigned flags;              /* enum rdmap_wc_flags */
};

#endif
