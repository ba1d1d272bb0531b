/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The benchmarks' data (bench_overlap, bench_offload_time, and Open MPI's
 * overlap_mpi): every byte of every call checked, at the cost of one pass
 * over the buffers per call instead of one hash per byte.
 *
 * A block is 8-byte words; word w of the block origin o sends to
 * destination d is a hash of (o, d, w) (tbyte.h's mixer, one per word, so a
 * block delivered to the wrong place or at the wrong offset passes only by
 * chance), computed once per message size into a base buffer. Call c sends
 * base XOR bd_key(c) in every word: a result left over from another call,
 * or never written, differs from the reference in every word. Each call
 * then costs one XOR pass to make its send buffer and one compare pass
 * over the received bytes, where hashing every byte of a 1 MiB alltoall
 * (16 MiB per rank) took tens of seconds per call in the guest.
 *
 * The key is laid over the whole buffer from its first byte, so a block
 * keeps its key bytes wherever it lands only when its size is a multiple of
 * 8: the benchmarks use 8 B .. 1 MiB in powers of two.
 */
#ifndef TC_BENCH_DATA_H
#define TC_BENCH_DATA_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../unit/tbyte.h"

static inline uint64_t bd_key(uint32_t call)
{
	/* never 0: a call's bytes differ from the base's and from every other call's */
	return tbyte_mix(0x5bd1e995ull + call) | 1;
}

/* Block of origin o to destination d (d = 0 where all get the same block), m bytes, into p. */
static inline void bd_block(unsigned char *p, uint32_t o, uint32_t d, size_t m)
{
	uint64_t h = tbyte_mix(((uint64_t)o << 32 | d) + 0x9e3779b97f4a7c15ull);

	for (size_t w = 0; w * 8 < m; w++) {
		uint64_t v = tbyte_mix(h ^ w);
		size_t n = m - w * 8 < 8 ? m - w * 8 : 8;

		memcpy(p + w * 8, &v, n);
	}
}

/* dst = src XOR key, byte-wise through whole words (n any size). */
static inline void bd_xor(unsigned char *dst, const unsigned char *src, size_t n, uint64_t key)
{
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		uint64_t v;

		memcpy(&v, src + i, 8);
		v ^= key;
		memcpy(dst + i, &v, 8);
	}
	for (; i < n; i++)
		dst[i] = src[i] ^ (unsigned char)(key >> (8 * (i % 8)));
}

/* Bytes of got that differ from ref XOR key. */
static inline long bd_bad(const unsigned char *got, const unsigned char *ref, size_t n, uint64_t key)
{
	long bad = 0;
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		uint64_t a, b;

		memcpy(&a, got + i, 8);
		memcpy(&b, ref + i, 8);
		if (a != (b ^ key))
			for (int k = 0; k < 8; k++)
				bad += got[i + k] != (unsigned char)(ref[i + k] ^ (unsigned char)(key >> (8 * k)));
	}
	for (; i < n; i++)
		bad += got[i] != (unsigned char)(ref[i] ^ (unsigned char)(key >> (8 * (i % 8))));
	return bad;
}

#endif /* TC_BENCH_DATA_H */
