// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The device and its address: which RDMA device a rank uses and the IPv4
 * address rdma_cm reaches it at, and the check of every rank's connection
 * card after the exchange.
 */
#include "transport/verbs/verbs.h"

/* The device (named, or the first with an active port) and an IPv4 address
 * of its RoCE GID table (an IB device needs IPoIB: the same). */
int tc_vb_find_addr(const char *want, char *name, size_t name_len, uint32_t *ipv4)
{
	struct ibv_device **list;
	int n, ret = -ENODEV, found = 0;
	char active_no_ip[64] = "";

	list = ibv_get_device_list(&n);
	if (!list || !n) {
		if (list)
			ibv_free_device_list(list);
		return tc_err(-ENODEV, "transport verbs: %s%s%sthis host has no RDMA device (for soft-RoCE: rdma link add "
			      "rxe0 type rxe netdev IF)", want ? "no RDMA device named " : "", want ? want : "", want ? ": " : "");
	}
	for (int i = 0; i < n && !found; i++) {
		const char *dn = ibv_get_device_name(list[i]);
		struct ibv_device_attr da;
		struct ibv_context *c;

		if (want && strcmp(want, dn))
			continue;
		c = ibv_open_device(list[i]);
		if (!c)
			continue;
		if (!ibv_query_device(c, &da)) {
			for (int port = 1; port <= da.phys_port_cnt && !found; port++) {
				struct ibv_port_attr pa;

				if (ibv_query_port(c, port, &pa) || pa.state != IBV_PORT_ACTIVE)
					continue;
				for (int g = 0; g < pa.gid_tbl_len && !found; g++) {
					union ibv_gid gid;
					static const uint8_t v4map[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

					if (ibv_query_gid(c, port, g, &gid))
						continue;
					if (!memcmp(gid.raw, v4map, 12) && memcmp(gid.raw + 12, "\0\0\0\0", 4)) {
						memcpy(ipv4, gid.raw + 12, 4);
						snprintf(name, name_len, "%s", dn);
						found = 1;
					}
				}
				if (!found && !active_no_ip[0])
					snprintf(active_no_ip, sizeof(active_no_ip), "%s port %d", dn, port);
			}
		}
		ibv_close_device(c);
		if (want && !found) {
			ret = tc_err(-ENETDOWN, "transport verbs: RDMA device %s has no active port with an IPv4 address", want);
			ibv_free_device_list(list);
			return ret;
		}
	}
	if (found) {
		ibv_free_device_list(list);
		return 0;
	}
	if (want) {
		char names[160] = "";

		for (int i = 0; i < n; i++)
			snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s", i ? ", " : "",
				 ibv_get_device_name(list[i]));
		ret = tc_err(-ENODEV, "transport verbs: no RDMA device named %s (TC_RDMA_DEVICE); there are: %s", want,
			     names);
	} else if (active_no_ip[0]) {
		ret = tc_err(-ENETDOWN, "transport verbs: %s is active but has no IPv4 address for rdma_cm", active_no_ip);
	} else {
		ret = tc_err(-ENETDOWN, "transport verbs: no RDMA device has an active port");
	}
	ibv_free_device_list(list);
	return ret;
}

/* Every rank's card from the exchange: the same library, eager limit and
 * communicator number; each rank's device set up. Filed in vb->peers. */
int tc_vb_check_cards(struct tc_vb *vb, struct tc_vb_card *all)
{
	/* An out-of-band exchange runs on the caller's own group (an MPI
	 * communicator), not the whole job: ranks may have made different
	 * numbers of communicators before. They agree on the largest number,
	 * which their connection hellos then carry. */
	for (int r = 0; vb->boot.oob_allgather && r < vb->size; r++)
		if (all[r].seq > vb->seq)
			vb->seq = all[r].seq;
	for (int r = 0; r < vb->size; r++) {
		if (all[r].magic != TC_VB_MAGIC || all[r].rank != r ||
		    (all[r].seq != vb->seq && !vb->boot.oob_allgather)) {
			return tc_err(-EPROTO, "transport verbs: rank %d's connection data is malformed (different library versions?)",
				      r);
		}
		all[r].host[sizeof(all[r].host) - 1] = 0;
		if (all[r].eager != vb->eager) {
			return tc_err(-EINVAL, "transport verbs: rank %d on %s sends eagerly up to %u bytes, this rank %u: "
				     "set TC_VERBS_EAGER alike on every rank", r, all[r].host, all[r].eager, vb->eager);
		}
		vb->peers[r].card = all[r];
		if (!all[r].ok) {
			return tc_err(-ENODEV, "transport verbs: rank %d on %s could not set up its RDMA device (see its error)",
				     r, all[r].host);
		}
	}
	return 0;
}
