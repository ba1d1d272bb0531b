// SPDX-License-Identifier: GPL-2.0
/*
 * torus: memory registration. TORUS_IOC_MR_REG pins a range of the caller's
 * memory long-term (pin_user_pages_fast with FOLL_LONGTERM, FOLL_WRITE for a
 * range receives may write into), charges the pages to the caller's mm
 * (pinned_vm, against RLIMIT_MEMLOCK unless CAP_IPC_LOCK, as ib_umem_get
 * does) and files the registration in the open file's table under a key.
 * Descriptors name registered memory by (key, offset, length) (post.c takes
 * a hold per segment); the engines copy to and from the pinned pages with
 * kmap_local_page() (matrix.c), from whatever context they run in, never
 * touching the process's page tables. The pages are unpinned when the last
 * reference goes: MR_DEREG or the file's release drops the table's, each
 * descriptor drops its own when it completes, so munmap or exit with
 * messages in flight is safe.
 */
#include <linux/capability.h>
#include <linux/mm.h>
#include <linux/mmap_lock.h>
#include <linux/overflow.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>

#include "torus.h"

void torus_file_mrs_init(struct torus_file *tf)
{
	xa_init_flags(&tf->mrs, XA_FLAGS_ALLOC1);
	tf->next_key = 1;
}

static void torus_mr_release(struct kref *ref)
{
	struct torus_mr *mr = container_of(ref, struct torus_mr, ref);

	might_sleep();
	unpin_user_pages_dirty_lock(mr->pages, mr->npages, mr->writable);
	atomic64_sub(mr->npages, &mr->mm->pinned_vm);
	mmdrop(mr->mm);
	kvfree(mr->pages);
	kfree(mr);
}

/* The last reference unpins: the caller may sleep. */
void torus_mr_put(struct torus_mr *mr)
{
	kref_put(&mr->ref, torus_mr_release);
}

/* Pin @mr's range into mr->pages with @gup; on failure nothing stays pinned. */
static int torus_mr_pin_flags(struct torus_mr *mr, unsigned int gup)
{
	unsigned long base = mr->addr & PAGE_MASK, done = 0;
	int got;

	while (done < mr->npages) {
		cond_resched();
		if (fatal_signal_pending(current)) {
			got = -EINTR;
			goto err_unpin;
		}
		got = pin_user_pages_fast(base + done * PAGE_SIZE,
					  min_t(unsigned long, mr->npages - done, TORUS_PIN_CHUNK),
					  gup | FOLL_LONGTERM, mr->pages + done);
		if (got <= 0) {
			got = got ? got : -EFAULT;
			goto err_unpin;
		}
		done += got;
	}
	return 0;

err_unpin:
	unpin_user_pages(mr->pages, done);
	return got;
}

/* Every page of [start, end) is mapped readable (no hole, no PROT_NONE). */
static int torus_mr_check_readable(struct mm_struct *mm, u64 start, u64 end)
{
	struct vm_area_struct *vma;
	u64 addr = start;
	int ret = 0;

	mmap_read_lock(mm);
	while (addr < end) {
		vma = find_vma(mm, addr);
		if (!vma || vma->vm_start > addr || !(vma->vm_flags & VM_READ)) {
			ret = -EFAULT;
			break;
		}
		addr = vma->vm_end;
	}
	mmap_read_unlock(mm);
	return ret;
}

/*
 * A writable registration pins for writing. A read-only one pins as for a
 * forced write first, as ib_umem_get() does in 6.1: that breaks
 * copy-on-write in private mappings, so the pages pinned are the ones the
 * process goes on writing (a read-only pin of never-written anonymous
 * memory would pin the shared zero page, and later writes would never be
 * sent). Read-only shared mappings cannot be written even so: they are
 * pinned read-only, where the pages are the mapping's own.
 */
static int torus_mr_pin(struct torus_mr *mr)
{
	int ret;

	if (mr->writable)
		return torus_mr_pin_flags(mr, FOLL_WRITE);
	/* FOLL_FORCE would pin PROT_NONE memory too: every page must be readable */
	ret = torus_mr_check_readable(mr->mm, mr->addr, mr->addr + mr->length);
	if (ret)
		return ret;
	ret = torus_mr_pin_flags(mr, FOLL_WRITE | FOLL_FORCE);
	if (ret == -EFAULT)
		ret = torus_mr_pin_flags(mr, 0);
	return ret;
}

int torus_mr_reg(struct torus_file *tf, struct torus_mr_reg *r)
{
	struct mm_struct *mm = current->mm;
	unsigned long limit, npages;
	struct torus_mr *mr;
	u64 end;
	int ret;

	if (r->__reserved)
		return -EINVAL;
	r->key = 0;
	if (!r->length || r->length > TORUS_MAX_MR_BYTES ||
	    check_add_overflow(r->addr, r->length, &end) || PAGE_ALIGN(end) < end)
		return -EINVAL;
	if (!mm || end > TASK_SIZE)
		return -EFAULT;
	npages = (PAGE_ALIGN(end) - (r->addr & PAGE_MASK)) >> PAGE_SHIFT;

	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return -ENOMEM;
	mr->pages = kvmalloc_array(npages, sizeof(*mr->pages), GFP_KERNEL);
	if (!mr->pages) {
		ret = -ENOMEM;
		goto err_free_mr;
	}
	kref_init(&mr->ref);
	atomic_set(&mr->inflight, 0);
	mr->addr = r->addr;
	mr->length = r->length;
	mr->npages = npages;
	mr->writable = r->flags & TORUS_MR_WRITE;
	mr->mm = mm;
	mmgrab(mm);

	limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	if (atomic64_add_return(npages, &mm->pinned_vm) > limit && !capable(CAP_IPC_LOCK)) {
		ret = -ENOMEM;
		goto err_uncharge;
	}
	ret = torus_mr_pin(mr);
	if (ret)
		goto err_uncharge;
	ret = xa_alloc_cyclic(&tf->mrs, &mr->key, mr, XA_LIMIT(1, TORUS_MAX_MRS), &tf->next_key,
			      GFP_KERNEL);
	if (ret < 0) {
		ret = ret == -EBUSY ? -ENOSPC : ret;
		goto err_unpin;
	}
	r->key = mr->key;
	return 0;

err_unpin:
	unpin_user_pages(mr->pages, mr->npages);
err_uncharge:
	atomic64_sub(npages, &mm->pinned_vm);
	mmdrop(mm);
	kvfree(mr->pages);
err_free_mr:
	kfree(mr);
	return ret;
}

/*
 * Erase registration @key of this process from @tf and drop the table's
 * reference: -ENOENT if there is none, -EBUSY while descriptors outside
 * programs use it. Programs of @tf that name it are cancelled first
 * (prog.c: their completion says -ECANCELED), once.
 */
int torus_mr_dereg(struct torus_file *tf, u32 key)
{
	struct torus_mr *mr;
	bool cancelled = false;

again:
	xa_lock(&tf->mrs);
	mr = xa_load(&tf->mrs, key);
	if (!mr || mr->mm != current->mm) {
		xa_unlock(&tf->mrs);
		return -ENOENT;
	}
	if (atomic_read(&mr->inflight)) {
		kref_get(&mr->ref);
		xa_unlock(&tf->mrs);
		if (!cancelled && torus_prog_cancel_mr(tf, mr)) {
			cancelled = true;
			torus_mr_put(mr);
			goto again;
		}
		torus_mr_put(mr);
		return -EBUSY;
	}
	__xa_erase(&tf->mrs, key);
	xa_unlock(&tf->mrs);
	torus_mr_put(mr);
	return 0;
}

/*
 * A descriptor segment's hold on registration @key of this process (a
 * reference and one in flight), or NULL: no such key in @tf, or another
 * process's (a forked child's use of its parent's keys).
 */
struct torus_mr *torus_mr_hold(struct torus_file *tf, u32 key)
{
	struct torus_mr *mr;

	xa_lock(&tf->mrs);
	mr = xa_load(&tf->mrs, key);
	if (mr && mr->mm == current->mm) {
		kref_get(&mr->ref);
		atomic_inc(&mr->inflight);
	} else {
		mr = NULL;
	}
	xa_unlock(&tf->mrs);
	return mr;
}

/*
 * A segment's descriptor is done with @mr: MR_DEREG may go ahead. Called
 * before the completion becomes visible (any context), so a caller that
 * reaped it can deregister; the reference goes with torus_mr_put().
 */
void torus_mr_done(struct torus_mr *mr)
{
	atomic_dec(&mr->inflight);
}

/*
 * Release of @tf: drop the table's reference on every registration. Those
 * that queued descriptors (of other files of the node, or of this node not
 * yet quiesced) still use stay pinned until those complete.
 */
void torus_file_mrs_destroy(struct torus_file *tf)
{
	struct torus_mr *mr;
	unsigned long key;

	xa_for_each(&tf->mrs, key, mr) {
		xa_erase(&tf->mrs, key);
		torus_mr_put(mr);
	}
	xa_destroy(&tf->mrs);
}
