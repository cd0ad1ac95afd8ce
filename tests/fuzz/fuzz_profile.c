/* Parsed profiles and what is built from them, kept per process for the
 * decoder fuzz targets (fuzz_profile.h), and the libFuzzer mutator that
 * leaves the profile alone most of the time. */
#include "tests/fuzz/fuzz_profile.h"

#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

/* A few profiles: a seed corpus holds a handful, and a mutated profile
 * that parses stays in use while its descendants are fuzzed. */
#define SLOTS 32
#define MEMO 64

typedef struct {
	uint64_t key;
	void *obj;
	void (*free_fn)(void *);
} memo_entry;

typedef struct {
	int used;
	XXH128_hash_t bytes_hash;
	unsigned long last_use;
	wzc_profile *prof;
	int nmemo;
	memo_entry memo[MEMO];
} slot;

static slot slots[SLOTS];
static unsigned long clock_ticks;

static void forget_memo(slot *s)
{
	for (int i = 0; i < s->nmemo; i++)
		if (s->memo[i].free_fn)
			s->memo[i].free_fn(s->memo[i].obj);
	s->nmemo = 0;
}

static void drop(slot *s)
{
	forget_memo(s);
	wzc_profile_free(s->prof);
	memset(s, 0, sizeof *s);
}

size_t fuzz_profile_len(const uint8_t *data, size_t size)
{
	size_t n = (size_t)data[1] | (size_t)data[2] << 8 | (size_t)data[3] << 16 |
		   (size_t)data[4] << 24;
	return n > size - 5 ? size - 5 : n;
}

static wzc_profile *parse(const uint8_t *bytes, size_t n)
{
	uint8_t *b = malloc(n ? n : 1);
	if (!b)
		return NULL;
	memcpy(b, bytes, n);
	wzc_profile *prof = NULL;
	if (!wzc_profile_parse(b, n, "fuzz", &prof, NULL))
		wzc_profile_free(prof);
	prof = NULL;
	/* the checksums made right (from version 5 each layer's too), so that
	 * the value checks and the decoder see the damage */
	wzc_profile_reseal(b, n);
	if (wzc_profile_parse(b, n, "fuzz", &prof, NULL))
		prof = NULL;
	free(b);
	return prof;
}

const wzc_profile *fuzz_profile_get(const uint8_t *bytes, size_t n)
{
	XXH128_hash_t h = XXH3_128bits(bytes, n);
	slot *oldest = &slots[0];
	clock_ticks++;
	for (int i = 0; i < SLOTS; i++) {
		slot *s = &slots[i];
		if (s->used && XXH128_isEqual(s->bytes_hash, h)) {
			s->last_use = clock_ticks;
			return s->prof;
		}
		if (!s->used || (oldest->used && s->last_use < oldest->last_use))
			oldest = s;
	}
	if (oldest->used)
		drop(oldest);
	oldest->used = 1;
	oldest->bytes_hash = h;
	oldest->last_use = clock_ticks;
	oldest->prof = parse(bytes, n);
	return oldest->prof;
}

static slot *slot_of(const wzc_profile *p)
{
	for (int i = 0; i < SLOTS; i++)
		if (slots[i].used && slots[i].prof == p)
			return &slots[i];
	return NULL;
}

void *fuzz_memo_get(const wzc_profile *p, uint64_t key, int *found)
{
	slot *s = slot_of(p);
	for (int i = 0; s && i < s->nmemo; i++)
		if (s->memo[i].key == key) {
			*found = 1;
			return s->memo[i].obj;
		}
	*found = 0;
	return NULL;
}

void fuzz_memo_put(const wzc_profile *p, uint64_t key, void *obj, void (*free_fn)(void *))
{
	slot *s = slot_of(p);
	if (!s) {
		if (free_fn)
			free_fn(obj);
		return;
	}
	if (s->nmemo == MEMO)
		forget_memo(s);
	s->memo[s->nmemo++] = (memo_entry){ key, obj, free_fn };
}

#ifdef WZ_LIBFUZZER
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);

/* Building a coder under the fuzzer's instrumentation takes about a
 * second, decoding a few records well under a millisecond, and most
 * mutated profiles still parse: one mutation in 8192 may touch anything
 * (the flags or rate byte, the length, the profile); the others change
 * only what follows the profile, so nearly every input reuses a kept
 * profile and coder and runs at the decoder's speed.  Seed inputs cover the
 * flags and rates worth having. */
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
	if (size < 5 || seed % 8192 == 0)
		return LLVMFuzzerMutate(data, size, max_size);
	size_t head = 5 + fuzz_profile_len(data, size);
	if (max_size <= head)
		return LLVMFuzzerMutate(data, size, max_size);
	if (size == head) {
		data[head] = (uint8_t)(seed >> 10);
		return head + 1;
	}
	return head + LLVMFuzzerMutate(data + head, size - head, max_size - head);
}
#endif
