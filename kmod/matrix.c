// SPDX-License-Identifier: GPL-2.0
/*
 * torus: the buffer matrix, NIC memory of one node. vmalloc_user() memory
 * mapped into the node's process with remap_vmalloc_range(); every mapping
 * and every queued descriptor holds a reference, so the memory stays until
 * the last of them is gone. The segment copy used by the engines lives here
 * too (segment checks are post.c's).
 */
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "torus.h"

struct torus_matrix *torus_matrix_alloc(size_t bytes)
{
	struct torus_matrix *mx;

	mx = kzalloc(sizeof(*mx), GFP_KERNEL);
	if (!mx)
		return NULL;
	mx->size = PAGE_ALIGN(bytes);
	mx->vaddr = vmalloc_user(mx->size);
	if (!mx->vaddr) {
		kfree(mx);
		return NULL;
	}
	kref_init(&mx->ref);
	return mx;
}

static void torus_matrix_release(struct kref *ref)
{
	struct torus_matrix *mx = container_of(ref, struct torus_matrix, ref);

	vfree(mx->vaddr);
	kfree(mx);
}

void torus_matrix_get(struct torus_matrix *mx)
{
	kref_get(&mx->ref);
}

void torus_matrix_put(struct torus_matrix *mx)
{
	if (mx)
		kref_put(&mx->ref, torus_matrix_release);
}

static void torus_matrix_vm_open(struct vm_area_struct *vma)
{
	torus_matrix_get(vma->vm_private_data);
}

static void torus_matrix_vm_close(struct vm_area_struct *vma)
{
	torus_matrix_put(vma->vm_private_data);
}

static const struct vm_operations_struct torus_matrix_vm_ops = {
	.open = torus_matrix_vm_open,
	.close = torus_matrix_vm_close,
};

int torus_matrix_mmap(struct torus_matrix *mx, struct vm_area_struct *vma)
{
	unsigned long len = vma->vm_end - vma->vm_start;
	int ret;

	if (vma->vm_pgoff || len > mx->size)
		return -EINVAL;
	ret = remap_vmalloc_range(vma, mx->vaddr, 0);
	if (ret)
		return ret;
	vma->vm_flags |= VM_DONTEXPAND | VM_DONTDUMP;
	vma->vm_private_data = mx;
	vma->vm_ops = &torus_matrix_vm_ops;
	torus_matrix_get(mx);
	return 0;
}

/*
 * Map byte @pos of segment @s (of a matrix or flat buffer at @base, or of
 * its registration's pinned pages) and cut *@run to what is contiguous
 * there. *@page is the mapped page, NULL for @base memory.
 */
static void *torus_kseg_map(void *base, const struct torus_kseg *s, u64 pos, u64 *run,
			    struct page **page)
{
	u64 at;

	if (!s->mr) {
		*page = NULL;
		return base + s->offset + pos;
	}
	at = offset_in_page(s->mr->addr) + s->offset + pos;
	*run = min_t(u64, *run, PAGE_SIZE - offset_in_page(at));
	*page = s->mr->pages[at >> PAGE_SHIFT];
	return kmap_local_page(*page) + offset_in_page(at);
}

/*
 * Copy @len bytes from the gather list (@sbase, @ssegs) to the scatter list
 * (@dbase, @dsegs): matrix or flat segments at their base, registered ones
 * straight between their pinned pages (kmap_local_page, one page pair at a
 * time, never across a sleep). Both lists were checked and both total
 * @len. memcpy in the largest runs the two lists allow, yielding every
 * TORUS_COPY_CHUNK: the engines run in process context (a work item or the
 * poster), never under a spinlock while copying.
 */
void torus_copy_segs(void *dbase, const struct torus_kseg *dsegs, u32 dn,
		     void *sbase, const struct torus_kseg *ssegs, u32 sn, u64 len)
{
	u64 doff = 0, soff = 0, since = 0, run;
	struct page *dpage, *spage;
	void *dp, *sp;
	u32 di = 0, si = 0;

	while (len && di < dn && si < sn) {
		run = min3(len, dsegs[di].length - doff, ssegs[si].length - soff);
		run = min_t(u64, run, TORUS_COPY_CHUNK);
		dp = torus_kseg_map(dbase, &dsegs[di], doff, &run, &dpage);
		sp = torus_kseg_map(sbase, &ssegs[si], soff, &run, &spage);
		memcpy(dp, sp, run);
		/* kmap_local mappings are stacked: undo in reverse order */
		if (spage)
			kunmap_local(sp);
		if (dpage) {
			flush_dcache_page(dpage);
			kunmap_local(dp);
		}
		len -= run;
		doff += run;
		soff += run;
		if (doff == dsegs[di].length) {
			di++;
			doff = 0;
		}
		if (soff == ssegs[si].length) {
			si++;
			soff = 0;
		}
		since += run;
		if (since >= TORUS_COPY_CHUNK) {
			since = 0;
			cond_resched();
		}
	}
}
