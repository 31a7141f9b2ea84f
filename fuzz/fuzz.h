/*
 * fuzz.h: what the libFuzzer harnesses in fuzz/ share. Each fuzz-X.c
 * defines LLVMFuzzerTestOneInput; linked with -fsanitize=fuzzer it is a
 * fuzzer (make fuzz), linked with replay.c it replays saved inputs in
 * make check, with any compiler.
 */
#ifndef GPUQ_FUZZ_H
#define GPUQ_FUZZ_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

int		 LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A private directory for this process, made on first use and removed
 * at exit (on tmpfs when /dev/shm is there). Borrowed. */
const char	*fuzz_tmpdir(void);
/* Write DATA to a file named NAME in fuzz_tmpdir(); its path, borrowed
 * until the next call. */
const char	*fuzz_file(const char *name, const uint8_t *data, size_t size);
/* DATA as JSON (any value, duplicates allowed), or NULL. New. */
json_t		*fuzz_json(const uint8_t *data, size_t size);
struct prov_observed;
/* Abort unless O is what a mapper may hand the reconciler: a known
 * state, and every string readable to its end. */
void		 fuzz_observed_check(const struct prov_observed *o);
/* Call MAP on each item of DOC as a list page holds them (the array
 * member ITEMS, or under aggregatedList's "items" -> scope -> ITEMS),
 * else on DOC itself; then fuzz_observed_check. */
void		 fuzz_map_page(json_t *doc, const char *items,
		    int (*map)(json_t *, void *), void *arg);
/* Quiet the daemon's log (once). */
void		 fuzz_quiet(void);

#endif
