/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The part of rdma-core's private provider ABI that softhca uses.
 *
 * libibverbs does not install its provider interface (infiniband/driver.h);
 * in-tree providers are built inside the rdma-core tree.  An out-of-tree
 * provider therefore has to state that interface itself.  This file does
 * so for rdma-core 44 (Debian 12), symbol version IBVERBS_PRIVATE_34, on
 * x86-64 LP64.  It is written from the documented/observed layout, not
 * copied: struct tags and function names are kept because they are the
 * ABI (names of linked symbols) or make the correspondence obvious.
 *
 * Nothing here is stable upstream.  rdma-core promises only that a layout
 * change comes with a new IBVERBS_PRIVATE_<n> version, and the linker then
 * refuses to load us (our references are bound to IBVERBS_PRIVATE_34).
 * The _Static_asserts at the bottom pin every offset softhca relies on to
 * the values of v44.0, so a wrong assumption fails the build instead of
 * corrupting memory at run time.
 *
 * Naming: rcp_ ("rdma-core private") marks helpers that exist only in this
 * file; they have no counterpart symbol in libibverbs.
 */
#ifndef SOFTHCA_RDMA_CORE_PRIVATE_H
#define SOFTHCA_RDMA_CORE_PRIVATE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>

#if !defined(__x86_64__) || !defined(__LP64__)
#error "layout numbers below were derived for x86-64 LP64 only"
#endif

/*
 * Private ABI generation.  It is baked into the name of the registration
 * symbol as well as into the symbol version of every private function, so
 * a libibverbs with a different generation cannot bind to us at all.
 */
#define RCP_PABI_VERSION 34

/* ccan's intrusive list link, as embedded in the core's device objects. */
struct rcp_list_node {
	struct rcp_list_node *next;
	struct rcp_list_node *prev;
};

/*
 * What the core learned about a device from sysfs/netlink.  softhca never
 * looks inside (driver-id matching happens in the core), so it stays
 * opaque: fewer assumed offsets, fewer ways to break.
 */
struct verbs_sysfs_dev;

/* verbs_match_ent.kind */
enum {
	VERBS_MATCH_SENTINEL = 0,	/* terminates a match table */
	VERBS_MATCH_PCI = 1,
	VERBS_MATCH_MODALIAS = 2,
	VERBS_MATCH_DRIVER_ID = 3,	/* compare u.driver_id with the
					 * kernel's ib_device_ops.driver_id,
					 * reported over rdma netlink */
};

/* One entry of a provider's device match table. */
struct verbs_match_ent {
	void *driver_data;
	union {
		const char *modalias;
		uint64_t driver_id;
	} u;
	uint16_t vendor;
	uint16_t device;
	uint8_t kind;
};

struct verbs_device;

/* The provider's descriptor, handed to the core by registration. */
struct verbs_device_ops {
	const char *name;

	/* inclusive range of ib_device_ops.uverbs_abi_ver accepted */
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

/*
 * The core's per-device object.  The provider allocates it (embedded at the
 * start of its own device struct) in alloc_device; the core fills in
 * everything after 'device' and frees it through uninit_device.
 */
struct verbs_device {
	struct ibv_device device;		/* must be first */
	const struct verbs_device_ops *ops;
	atomic_int refcount;
	struct rcp_list_node entry;
	struct verbs_sysfs_dev *sysfs;
	uint64_t core_support;
};

/*
 * The core's wrappers around objects the provider allocates: the
 * provider embeds them and the core's command helpers fill them in.
 */
struct verbs_mr {
	struct ibv_mr ibv_mr;
	int mr_type;			/* the core's enum ibv_mr_type */
	int access;
};

struct verbs_cq {
	union {
		struct ibv_cq cq;
		struct ibv_cq_ex cq_ex;
	};
};

struct verbs_xrcd;

struct verbs_qp {
	union {
		struct ibv_qp qp;
		struct ibv_qp_ex qp_ex;
	};
	uint32_t comp_mask;
	struct verbs_xrcd *xrcd;
};

/*
 * Per-context operation table, copied into the context by verbs_set_ops()
 * (NULL entries keep the core's "not supported" defaults).
 *
 * In v44.0 it has 76 function-pointer slots, ordered alphabetically by op
 * name.  Only the slots softhca implements are spelled out; the others are
 * reserved padding.  To implement another op, look up its 0-based index in
 * v44.0's libibverbs/driver.h, split the reserved run around it, and add an
 * offset assertion below.  The size assertion catches miscounting.
 */
typedef void (*rcp_op_slot)(void);

struct verbs_context_ops {
	int (*advise_mr)(struct ibv_pd *pd,			/* 0 */
			 enum ibv_advise_mr_advice advice, uint32_t flags,
			 struct ibv_sge *sg_list, uint32_t num_sges);
	rcp_op_slot reserved_1[1];			/* alloc_dm */
	struct ibv_mw *(*alloc_mw)(struct ibv_pd *pd,		/* 2 */
				   enum ibv_mw_type type);
	rcp_op_slot reserved_3_4[2];			/* alloc_null_mr .. alloc_parent_domain */
	struct ibv_pd *(*alloc_pd)(struct ibv_context *context);	/* 5 */
	rcp_op_slot reserved_6_8[3];			/* alloc_td .. attach_counters_point_flow */
	int (*attach_mcast)(struct ibv_qp *qp,			/* 9 */
			    const union ibv_gid *gid, uint16_t lid);
	int (*bind_mw)(struct ibv_qp *qp, struct ibv_mw *mw,	/* 10 */
		       struct ibv_mw_bind *mw_bind);
	rcp_op_slot reserved_11_12[2];			/* close_xrcd .. cq_event */
	struct ibv_ah *(*create_ah)(struct ibv_pd *pd,		/* 13 */
				    struct ibv_ah_attr *attr);
	rcp_op_slot reserved_14[1];			/* create_counters */
	struct ibv_cq *(*create_cq)(struct ibv_context *context,	/* 15 */
				    int cqe, struct ibv_comp_channel *channel,
				    int comp_vector);
	struct ibv_cq_ex *(*create_cq_ex)(			/* 16 */
		struct ibv_context *context,
		struct ibv_cq_init_attr_ex *init_attr);
	rcp_op_slot reserved_17_18[2];			/* create_flow .. create_flow_action_esp */
	struct ibv_qp *(*create_qp)(struct ibv_pd *pd,		/* 19 */
				    struct ibv_qp_init_attr *attr);
	struct ibv_qp *(*create_qp_ex)(				/* 20 */
		struct ibv_context *context,
		struct ibv_qp_init_attr_ex *qp_init_attr_ex);
	rcp_op_slot reserved_21[1];			/* create_rwq_ind_table */
	struct ibv_srq *(*create_srq)(struct ibv_pd *pd,	/* 22 */
				      struct ibv_srq_init_attr *init_attr);
	rcp_op_slot reserved_23_24[2];			/* create_srq_ex .. create_wq */
	int (*dealloc_mw)(struct ibv_mw *mw);			/* 25 */
	int (*dealloc_pd)(struct ibv_pd *pd);			/* 26 */
	rcp_op_slot reserved_27[1];			/* dealloc_td */
	int (*dereg_mr)(struct verbs_mr *vmr);			/* 28 */
	int (*destroy_ah)(struct ibv_ah *ah);			/* 29 */
	rcp_op_slot reserved_30[1];			/* destroy_counters */
	int (*destroy_cq)(struct ibv_cq *cq);			/* 31 */
	rcp_op_slot reserved_32_33[2];			/* destroy_flow .. destroy_flow_action */
	int (*destroy_qp)(struct ibv_qp *qp);			/* 34 */
	rcp_op_slot reserved_35[1];			/* destroy_rwq_ind_table */
	int (*destroy_srq)(struct ibv_srq *srq);		/* 36 */
	rcp_op_slot reserved_37[1];			/* destroy_wq */
	int (*detach_mcast)(struct ibv_qp *qp,			/* 38 */
			    const union ibv_gid *gid, uint16_t lid);
	void (*free_context)(struct ibv_context *context);	/* 39 */
	rcp_op_slot reserved_40_46[7];			/* free_dm .. modify_flow_action_esp */
	int (*modify_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr,	/* 47 */
			 int attr_mask);
	rcp_op_slot reserved_48[1];			/* modify_qp_rate_limit */
	int (*modify_srq)(struct ibv_srq *srq,			/* 49 */
			  struct ibv_srq_attr *attr, int attr_mask);
	rcp_op_slot reserved_50_52[3];			/* modify_wq .. open_xrcd */
	int (*poll_cq)(struct ibv_cq *cq, int num_entries,	/* 53 */
		       struct ibv_wc *wc);
	int (*post_recv)(struct ibv_qp *qp, struct ibv_recv_wr *wr,	/* 54 */
			 struct ibv_recv_wr **bad_wr);
	int (*post_send)(struct ibv_qp *qp, struct ibv_send_wr *wr,	/* 55 */
			 struct ibv_send_wr **bad_wr);
	rcp_op_slot reserved_56[1];			/* post_srq_ops */
	int (*post_srq_recv)(struct ibv_srq *srq,		/* 57 */
			     struct ibv_recv_wr *wr,
			     struct ibv_recv_wr **bad_wr);
	int (*query_device_ex)(struct ibv_context *context,	/* 58 */
			       const struct ibv_query_device_ex_input *input,
			       struct ibv_device_attr_ex *attr,
			       size_t attr_size);
	rcp_op_slot reserved_59[1];			/* query_ece */
	int (*query_port)(struct ibv_context *context,		/* 60 */
			  uint8_t port_num,
			  struct ibv_port_attr *port_attr);
	int (*query_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr,	/* 61 */
			int attr_mask, struct ibv_qp_init_attr *init_attr);
	rcp_op_slot reserved_62_63[2];			/* query_qp_data_in_order .. query_rt_values */
	int (*query_srq)(struct ibv_srq *srq,			/* 64 */
			 struct ibv_srq_attr *attr);
	rcp_op_slot reserved_65_67[3];			/* read_counters .. reg_dmabuf_mr */
	struct ibv_mr *(*reg_mr)(struct ibv_pd *pd, void *addr,	/* 68 */
				 size_t length, uint64_t hca_va, int access);
	int (*req_notify_cq)(struct ibv_cq *cq, int solicited_only);	/* 69 */
	int (*rereg_mr)(struct verbs_mr *vmr, int flags,	/* 70 */
			struct ibv_pd *pd, void *addr, size_t length,
			int access);
	int (*resize_cq)(struct ibv_cq *cq, int cqe);		/* 71 */
	rcp_op_slot reserved_72_75[4];			/* set_ece .. unimport_pd */
};

/*
 * Legacy write() command buffers.  The core builds a uverbs write command
 * in place when the kernel lacks the ioctl method, so it needs room for the
 * header in front of the payload: uverbs header followed by the fixed part
 * of the kernel's request struct.  Any driver request data (softhca has
 * none yet) would follow directly.
 */
struct rcp_get_context_cmd {
	struct ib_uverbs_cmd_hdr hdr;
	__aligned_u64 response;
};

struct rcp_query_port_cmd {
	struct ib_uverbs_cmd_hdr hdr;
	__aligned_u64 response;
	__u8 port_num;
	__u8 reserved[7];
};

/* Header, then the kernel's request (its driver data, none, would follow). */
#define RCP_CMD(name, kabi)						\
	struct rcp_##name##_cmd {					\
		struct ib_uverbs_cmd_hdr hdr;				\
		struct kabi core;					\
	}

RCP_CMD(alloc_pd, ib_uverbs_alloc_pd);
RCP_CMD(alloc_mw, ib_uverbs_alloc_mw);
RCP_CMD(reg_mr, ib_uverbs_reg_mr);
RCP_CMD(create_cq, ib_uverbs_create_cq);
RCP_CMD(create_qp, ib_uverbs_create_qp);
RCP_CMD(modify_qp, ib_uverbs_modify_qp);
RCP_CMD(query_qp, ib_uverbs_query_qp);
RCP_CMD(rereg_mr, ib_uverbs_rereg_mr);
RCP_CMD(resize_cq, ib_uverbs_resize_cq);
RCP_CMD(create_srq, ib_uverbs_create_srq);

/* Extended commands: both headers, then the kernel's request. */
#define RCP_CMD_EX(name, kabi)						\
	struct rcp_##name##_cmd {					\
		struct ib_uverbs_cmd_hdr hdr;				\
		struct ib_uverbs_ex_cmd_hdr ex_hdr;			\
		struct kabi core;					\
	}

RCP_CMD_EX(create_cq_ex, ib_uverbs_ex_create_cq);
RCP_CMD_EX(create_qp_ex, ib_uverbs_ex_create_qp);
RCP_CMD(modify_srq, ib_uverbs_modify_srq);
RCP_CMD(query_srq, ib_uverbs_query_srq);

/* --- functions exported by libibverbs.so.1 as IBVERBS_PRIVATE_34 --- */

void verbs_register_driver_34(const struct verbs_device_ops *ops);

void *_verbs_init_and_alloc_context(struct ibv_device *device, int cmd_fd,
				    size_t alloc_size,
				    struct verbs_context *context_offset,
				    uint32_t driver_id);
void verbs_uninit_context(struct verbs_context *context);
void verbs_set_ops(struct verbs_context *vctx,
		   const struct verbs_context_ops *ops);

/*
 * The cmd/resp buffers carry the core part first and the driver's udata
 * right after it; the sizes passed are those of the whole buffers.  All
 * three return 0 or a positive errno value.
 */
int ibv_cmd_get_context(struct verbs_context *context,
			struct rcp_get_context_cmd *cmd, size_t cmd_size,
			struct ib_uverbs_get_context_resp *resp,
			size_t resp_size);
int ibv_cmd_query_device_any(struct ibv_context *context,
			     const struct ibv_query_device_ex_input *input,
			     struct ibv_device_attr_ex *attr, size_t attr_size,
			     struct ib_uverbs_ex_query_device_resp *resp,
			     size_t *resp_size);
int ibv_cmd_query_port(struct ibv_context *context, uint8_t port_num,
		       struct ibv_port_attr *port_attr,
		       struct rcp_query_port_cmd *cmd, size_t cmd_size);

int ibv_cmd_alloc_pd(struct ibv_context *context, struct ibv_pd *pd,
		     struct rcp_alloc_pd_cmd *cmd, size_t cmd_size,
		     struct ib_uverbs_alloc_pd_resp *resp, size_t resp_size);
int ibv_cmd_dealloc_pd(struct ibv_pd *pd);
int ibv_cmd_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
		   uint64_t hca_va, int access, struct verbs_mr *vmr,
		   struct rcp_reg_mr_cmd *cmd, size_t cmd_size,
		   struct ib_uverbs_reg_mr_resp *resp, size_t resp_size);
int ibv_cmd_rereg_mr(struct verbs_mr *vmr, uint32_t flags, void *addr,
		     size_t length, uint64_t hca_va, int access,
		     struct ibv_pd *pd, struct rcp_rereg_mr_cmd *cmd,
		     size_t cmd_size, struct ib_uverbs_rereg_mr_resp *resp,
		     size_t resp_size);
int ibv_cmd_dereg_mr(struct verbs_mr *vmr);
int ibv_cmd_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type,
		     struct ibv_mw *mw, struct rcp_alloc_mw_cmd *cmd,
		     size_t cmd_size, struct ib_uverbs_alloc_mw_resp *resp,
		     size_t resp_size);
int ibv_cmd_dealloc_mw(struct ibv_mw *mw);
int ibv_cmd_create_cq(struct ibv_context *context, int cqe,
		      struct ibv_comp_channel *channel, int comp_vector,
		      struct ibv_cq *cq, struct rcp_create_cq_cmd *cmd,
		      size_t cmd_size, struct ib_uverbs_create_cq_resp *resp,
		      size_t resp_size);
/* cmd_flags: none of the core's CREATE_CQ_CMD_FLAGS_* apply to softhca. */
int ibv_cmd_create_cq_ex(struct ibv_context *context,
			 const struct ibv_cq_init_attr_ex *cq_attr,
			 struct verbs_cq *cq, struct rcp_create_cq_ex_cmd *cmd,
			 size_t cmd_size,
			 struct ib_uverbs_ex_create_cq_resp *resp,
			 size_t resp_size, uint32_t cmd_flags);
int ibv_cmd_resize_cq(struct ibv_cq *cq, int cqe,
		      struct rcp_resize_cq_cmd *cmd, size_t cmd_size,
		      struct ib_uverbs_resize_cq_resp *resp, size_t resp_size);
int ibv_cmd_destroy_cq(struct ibv_cq *cq);
int ibv_cmd_create_qp(struct ibv_pd *pd, struct ibv_qp *qp,
		      struct ibv_qp_init_attr *attr,
		      struct rcp_create_qp_cmd *cmd, size_t cmd_size,
		      struct ib_uverbs_create_qp_resp *resp, size_t resp_size);
int ibv_cmd_create_qp_ex2(struct ibv_context *context, struct verbs_qp *qp,
			  struct ibv_qp_init_attr_ex *attr_ex,
			  struct rcp_create_qp_ex_cmd *cmd, size_t cmd_size,
			  struct ib_uverbs_ex_create_qp_resp *resp,
			  size_t resp_size);
int ibv_cmd_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *qp_attr,
		     int attr_mask, struct ibv_qp_init_attr *qp_init_attr,
		     struct rcp_query_qp_cmd *cmd, size_t cmd_size);
int ibv_cmd_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
		      int attr_mask, struct rcp_modify_qp_cmd *cmd,
		      size_t cmd_size);
int ibv_cmd_destroy_qp(struct ibv_qp *qp);
int ibv_cmd_create_srq(struct ibv_pd *pd, struct ibv_srq *srq,
		       struct ibv_srq_init_attr *attr,
		       struct rcp_create_srq_cmd *cmd, size_t cmd_size,
		       struct ib_uverbs_create_srq_resp *resp,
		       size_t resp_size);
int ibv_cmd_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr,
		       int attr_mask, struct rcp_modify_srq_cmd *cmd,
		       size_t cmd_size);
int ibv_cmd_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr,
		      struct rcp_query_srq_cmd *cmd, size_t cmd_size);
int ibv_cmd_destroy_srq(struct ibv_srq *srq);
/* With an empty WR list, these are softhca's doorbells. */
int ibv_cmd_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		      struct ibv_send_wr **bad_wr);
int ibv_cmd_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		      struct ibv_recv_wr **bad_wr);
int ibv_cmd_create_ah(struct ibv_pd *pd, struct ibv_ah *ah,
		      struct ibv_ah_attr *attr,
		      struct ib_uverbs_create_ah_resp *resp, size_t resp_size);
int ibv_cmd_destroy_ah(struct ibv_ah *ah);
int ibv_cmd_advise_mr(struct ibv_pd *pd, enum ibv_advise_mr_advice advice,
		      uint32_t flags, struct ibv_sge *sg_list,
		      uint32_t num_sge);
int ibv_cmd_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid,
			 uint16_t lid);
int ibv_cmd_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid,
			 uint16_t lid);

/*
 * Allocate a zeroed provider context of type 'type' whose struct
 * verbs_context lives in member 'member', and initialise that member.
 * The core takes the member position as an offset smuggled in a pointer.
 * Returns NULL with errno set; cmd_fd is closed on failure.  On success,
 * undo with verbs_uninit_context() + free().
 */
#define RCP_ALLOC_CONTEXT(type, member, ibdev, cmd_fd, driver_id)		\
	({									\
		_Static_assert(__builtin_types_compatible_p(			\
				       __typeof__(((type *)0)->member),		\
				       struct verbs_context),			\
			       #member " is not a struct verbs_context");	\
		(type *)_verbs_init_and_alloc_context(				\
			(ibdev), (cmd_fd), sizeof(type),			\
			(struct verbs_context *)(uintptr_t)			\
				offsetof(type, member),				\
			(driver_id));						\
	})

/*
 * Register a provider when its shared object is loaded.  libibverbs
 * dlopen()s each configured provider and relies on this constructor having
 * run; no symbol needs to be exported for that.
 */
#define RCP_PROVIDER(ops)							\
	static void __attribute__((constructor)) rcp_register_##ops(void)	\
	{									\
		verbs_register_driver_34(&(ops));				\
	}

/* --- layout pins ---------------------------------------------------- */

#define RCP_ASSERT_OFF(type, field, off)					\
	_Static_assert(offsetof(struct type, field) == (off),			\
		       "rdma-core 44 ABI: offsetof(" #type ", " #field ")")
#define RCP_ASSERT_SIZE(type, size)						\
	_Static_assert(sizeof(struct type) == (size),				\
		       "rdma-core 44 ABI: sizeof(" #type ")")

/*
 * Public types the private ones embed or depend on.  These come from the
 * installed <infiniband/verbs.h>; if it ever disagrees with the v44 numbers
 * the private offsets below are wrong too.
 */
RCP_ASSERT_SIZE(ibv_device, 664);
RCP_ASSERT_SIZE(ibv_context, 328);
RCP_ASSERT_SIZE(verbs_context, 648);
RCP_ASSERT_OFF(verbs_context, priv, 208);
RCP_ASSERT_OFF(verbs_context, sz, 312);
RCP_ASSERT_OFF(verbs_context, context, 320);
/* The core finds verbs_context from ibv_context by assuming it is last. */
_Static_assert(offsetof(struct verbs_context, context) +
	       sizeof(struct ibv_context) == sizeof(struct verbs_context),
	       "struct ibv_context must end struct verbs_context");
_Static_assert(offsetof(struct verbs_context, sz) + sizeof(size_t) ==
	       offsetof(struct verbs_context, context),
	       "verbs_context.sz must sit right before the ibv_context");
RCP_ASSERT_SIZE(ibv_port_attr, 52);
RCP_ASSERT_SIZE(ibv_device_attr_ex, 400);
RCP_ASSERT_SIZE(ib_uverbs_get_context_resp, 8);
RCP_ASSERT_SIZE(ib_uverbs_ex_query_device_resp, 304);
RCP_ASSERT_SIZE(rcp_list_node, 16);

/* Command buffers must mirror the kernel request structs exactly. */
_Static_assert(sizeof(struct rcp_get_context_cmd) ==
	       sizeof(struct ib_uverbs_cmd_hdr) +
	       sizeof(struct ib_uverbs_get_context),
	       "get_context cmd = header + kernel request");
_Static_assert(sizeof(struct rcp_query_port_cmd) ==
	       sizeof(struct ib_uverbs_cmd_hdr) +
	       sizeof(struct ib_uverbs_query_port),
	       "query_port cmd = header + kernel request");
_Static_assert(offsetof(struct rcp_query_port_cmd, port_num) ==
	       sizeof(struct ib_uverbs_cmd_hdr) +
	       offsetof(struct ib_uverbs_query_port, port_num),
	       "query_port cmd port_num position");
RCP_ASSERT_SIZE(rcp_get_context_cmd, 16);
RCP_ASSERT_SIZE(rcp_query_port_cmd, 24);

/* Private structs, numbers derived from rdma-core v44.0. */
RCP_ASSERT_OFF(verbs_match_ent, driver_data, 0);
RCP_ASSERT_OFF(verbs_match_ent, u.driver_id, 8);
RCP_ASSERT_OFF(verbs_match_ent, vendor, 16);
RCP_ASSERT_OFF(verbs_match_ent, device, 18);
RCP_ASSERT_OFF(verbs_match_ent, kind, 20);
RCP_ASSERT_SIZE(verbs_match_ent, 24);

RCP_ASSERT_OFF(verbs_device_ops, name, 0);
RCP_ASSERT_OFF(verbs_device_ops, match_min_abi_version, 8);
RCP_ASSERT_OFF(verbs_device_ops, match_max_abi_version, 12);
RCP_ASSERT_OFF(verbs_device_ops, match_table, 16);
RCP_ASSERT_OFF(verbs_device_ops, static_providers, 24);
RCP_ASSERT_OFF(verbs_device_ops, match_device, 32);
RCP_ASSERT_OFF(verbs_device_ops, alloc_context, 40);
RCP_ASSERT_OFF(verbs_device_ops, import_context, 48);
RCP_ASSERT_OFF(verbs_device_ops, alloc_device, 56);
RCP_ASSERT_OFF(verbs_device_ops, uninit_device, 64);
RCP_ASSERT_SIZE(verbs_device_ops, 72);

RCP_ASSERT_OFF(verbs_device, device, 0);
RCP_ASSERT_OFF(verbs_device, ops, 664);
RCP_ASSERT_OFF(verbs_device, refcount, 672);
RCP_ASSERT_OFF(verbs_device, entry, 680);
RCP_ASSERT_OFF(verbs_device, sysfs, 696);
RCP_ASSERT_OFF(verbs_device, core_support, 704);
RCP_ASSERT_SIZE(verbs_device, 712);

RCP_ASSERT_OFF(verbs_context_ops, advise_mr, 0);
RCP_ASSERT_OFF(verbs_context_ops, alloc_mw, 2 * 8);
RCP_ASSERT_OFF(verbs_context_ops, alloc_pd, 5 * 8);
RCP_ASSERT_OFF(verbs_context_ops, attach_mcast, 9 * 8);
RCP_ASSERT_OFF(verbs_context_ops, bind_mw, 10 * 8);
RCP_ASSERT_OFF(verbs_context_ops, create_ah, 13 * 8);
RCP_ASSERT_OFF(verbs_context_ops, create_cq, 15 * 8);
RCP_ASSERT_OFF(verbs_context_ops, create_cq_ex, 16 * 8);
RCP_ASSERT_OFF(verbs_context_ops, create_qp, 19 * 8);
RCP_ASSERT_OFF(verbs_context_ops, create_qp_ex, 20 * 8);
RCP_ASSERT_OFF(verbs_context_ops, create_srq, 22 * 8);
RCP_ASSERT_OFF(verbs_context_ops, dealloc_mw, 25 * 8);
RCP_ASSERT_OFF(verbs_context_ops, dealloc_pd, 26 * 8);
RCP_ASSERT_OFF(verbs_context_ops, dereg_mr, 28 * 8);
RCP_ASSERT_OFF(verbs_context_ops, destroy_ah, 29 * 8);
RCP_ASSERT_OFF(verbs_context_ops, destroy_cq, 31 * 8);
RCP_ASSERT_OFF(verbs_context_ops, destroy_qp, 34 * 8);
RCP_ASSERT_OFF(verbs_context_ops, destroy_srq, 36 * 8);
RCP_ASSERT_OFF(verbs_context_ops, detach_mcast, 38 * 8);
RCP_ASSERT_OFF(verbs_context_ops, free_context, 39 * 8);
RCP_ASSERT_OFF(verbs_context_ops, modify_qp, 47 * 8);
RCP_ASSERT_OFF(verbs_context_ops, modify_srq, 49 * 8);
RCP_ASSERT_OFF(verbs_context_ops, poll_cq, 53 * 8);
RCP_ASSERT_OFF(verbs_context_ops, post_recv, 54 * 8);
RCP_ASSERT_OFF(verbs_context_ops, post_send, 55 * 8);
RCP_ASSERT_OFF(verbs_context_ops, post_srq_recv, 57 * 8);
RCP_ASSERT_OFF(verbs_context_ops, query_device_ex, 58 * 8);
RCP_ASSERT_OFF(verbs_context_ops, query_port, 60 * 8);
RCP_ASSERT_OFF(verbs_context_ops, query_qp, 61 * 8);
RCP_ASSERT_OFF(verbs_context_ops, query_srq, 64 * 8);
RCP_ASSERT_OFF(verbs_context_ops, reg_mr, 68 * 8);
RCP_ASSERT_OFF(verbs_context_ops, req_notify_cq, 69 * 8);
RCP_ASSERT_OFF(verbs_context_ops, rereg_mr, 70 * 8);
RCP_ASSERT_OFF(verbs_context_ops, resize_cq, 71 * 8);

RCP_ASSERT_OFF(verbs_mr, mr_type, 48);
RCP_ASSERT_SIZE(verbs_mr, 56);
RCP_ASSERT_SIZE(verbs_cq, 288);
RCP_ASSERT_OFF(verbs_qp, comp_mask, 352);
RCP_ASSERT_OFF(verbs_qp, xrcd, 360);
/* verbs_qp.comp_mask: the QP's ibv_qp_ex part is filled in. */
#define RCP_VERBS_QP_EX (1u << 1)
RCP_ASSERT_SIZE(verbs_qp, 368);

/* Command buffers: header, then exactly the kernel's request. */
_Static_assert(offsetof(struct rcp_create_cq_cmd, core) ==
	       sizeof(struct ib_uverbs_cmd_hdr),
	       "create_cq cmd: no padding after the header");
RCP_ASSERT_SIZE(rcp_alloc_pd_cmd, 16);
RCP_ASSERT_SIZE(rcp_alloc_mw_cmd, 24);
RCP_ASSERT_SIZE(rcp_reg_mr_cmd, 48);
RCP_ASSERT_SIZE(rcp_create_cq_cmd, 40);
RCP_ASSERT_SIZE(rcp_create_qp_cmd, 64);
RCP_ASSERT_SIZE(rcp_modify_qp_cmd, 120);
RCP_ASSERT_SIZE(rcp_query_qp_cmd, 24);
RCP_ASSERT_SIZE(rcp_rereg_mr_cmd, 56);
RCP_ASSERT_SIZE(rcp_resize_cq_cmd, 24);
RCP_ASSERT_SIZE(rcp_create_srq_cmd, 40);
RCP_ASSERT_SIZE(rcp_modify_srq_cmd, 24);
RCP_ASSERT_SIZE(rcp_query_srq_cmd, 24);
RCP_ASSERT_SIZE(rcp_create_cq_ex_cmd, 56);
RCP_ASSERT_SIZE(rcp_create_qp_ex_cmd, 88);
RCP_ASSERT_SIZE(verbs_context_ops, 76 * 8);

#endif /* SOFTHCA_RDMA_CORE_PRIVATE_H */
