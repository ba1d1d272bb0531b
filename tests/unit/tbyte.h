/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The test byte of (call, origin, destination, byte index): a hash of the
 * four, so no two of them share a pattern by construction. A byte pattern
 * made of sums (o * a + d * b + k * c) repeats: shifting the origin by one
 * amount and the destination by another, or the origin by 256, gives the
 * same bytes, and a block delivered to the wrong place can pass. With a
 * hash, a misplaced block of m bytes passes only by chance (1 in 256^m).
 * Use a different call number for every call whose bytes could be mistaken
 * for another's (the second call of a loop, another collective, another
 * salt); "destination" is 0 where every destination gets the same block.
 */
#ifndef TC_TEST_TBYTE_H
#define TC_TEST_TBYTE_H

#include <stddef.h>
#include <stdint.h>

static inline uint64_t tbyte_mix(uint64_t x)
{
	/* the finalizer of splitmix64: a bijection of 64-bit words */
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return x;
}

static inline unsigned char tbyte(uint32_t call, uint32_t origin, uint32_t dest, uint64_t k)
{
	uint64_t h = tbyte_mix(((uint64_t)call << 32 | origin) + 0x9e3779b97f4a7c15ull);

	return (unsigned char)(tbyte_mix(h ^ ((uint64_t)dest << 40 ^ k)) >> 24);
}

#endif /* TC_TEST_TBYTE_H */
