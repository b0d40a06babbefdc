// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Protection domains.  A PD owns nothing but its place in the device's
 * limit; MRs, QPs and AHs name it, and the data path checks that they
 * agree.
 */

#include "cmdq.h"
#include "dev.h"
#include "pd.h"

static int shca_pd_alloc_cmd(struct shca_cmd *cmd)
{
	struct shca_pd *pd = cmd->obj;

	return shca_dev_res_get(to_shca_dev(pd->ibpd.device), SHCA_RES_PD);
}

static int shca_pd_dealloc_cmd(struct shca_cmd *cmd)
{
	struct shca_pd *pd = cmd->obj;

	shca_dev_res_put(to_shca_dev(pd->ibpd.device), SHCA_RES_PD);
	return 0;
}

int shca_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct shca_cmd cmd = {
		.fn = shca_pd_alloc_cmd,
		.obj = to_shca_pd(ibpd),
	};

	int ret = shca_udata_no_request(ibpd->device, udata, "alloc_pd");

	if (ret)
		return ret;
	return shca_cmd_exec(&to_shca_dev(ibpd->device)->cmdq, &cmd);
}

int shca_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct shca_cmd cmd = {
		.fn = shca_pd_dealloc_cmd,
		.obj = to_shca_pd(ibpd),
		.must_run = true,
	};

	return shca_cmd_exec(&to_shca_dev(ibpd->device)->cmdq, &cmd);
}
