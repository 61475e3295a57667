/* The real ck_ring SPSC operations, compiled from Debian's libck-dev header (/usr/include/ck_ring.h,
 * Concurrency Kit 0.7.1). ck_ring's functions are static inline, so a harness in another language
 * reaches them through these one-line wrappers: nothing of ck_ring is copied or changed. */
#include <ck_ring.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

struct shim_ring {
	ck_ring_t ring;
	ck_ring_buffer_t *buffer;
};

struct shim_ring *shim_new(unsigned int size)
{
	struct shim_ring *r = calloc(1, sizeof *r);
	if (r == NULL)
		return NULL;
	r->buffer = calloc(size, sizeof *r->buffer);
	if (r->buffer == NULL) {
		free(r);
		return NULL;
	}
	ck_ring_init(&r->ring, size);
	return r;
}

bool shim_enqueue(struct shim_ring *r, uintptr_t value)
{
	return ck_ring_enqueue_spsc(&r->ring, r->buffer, (void *)value);
}

bool shim_dequeue(struct shim_ring *r, uintptr_t *value)
{
	void *v = NULL;
	bool ok = ck_ring_dequeue_spsc(&r->ring, r->buffer, &v);
	*value = (uintptr_t)v;
	return ok;
}

unsigned int shim_size(struct shim_ring *r)
{
	return ck_ring_size(&r->ring);
}

unsigned int shim_capacity(struct shim_ring *r)
{
	return ck_ring_capacity(&r->ring);
}
