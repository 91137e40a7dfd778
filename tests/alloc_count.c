/* tests/alloc_count.c — an LD_PRELOAD counter of heap allocations, for the video contract's
 * "nothing per frame allocates": every malloc, calloc, realloc, posix_memalign, aligned_alloc
 * and memalign of the process is counted (operator new goes through malloc), and the total is
 * written to the file named by PARVIS_ALLOC_COUNT_FILE at exit. Built by tests/video_contract.sh
 * with the system C compiler; glibc only (it forwards to glibc's __libc_* entry points). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>

extern void* __libc_malloc(size_t);
extern void* __libc_calloc(size_t, size_t);
extern void* __libc_realloc(void*, size_t);
extern void* __libc_memalign(size_t, size_t);

static unsigned long count;
static void counted(void) { __atomic_add_fetch(&count, 1, __ATOMIC_RELAXED); }

void* malloc(size_t n) { counted(); return __libc_malloc(n); }
void* calloc(size_t a, size_t b) { counted(); return __libc_calloc(a, b); }
void* realloc(void* p, size_t n) { counted(); return __libc_realloc(p, n); }
void* memalign(size_t a, size_t n) { counted(); return __libc_memalign(a, n); }
void* aligned_alloc(size_t a, size_t n) { counted(); return __libc_memalign(a, n); }
int posix_memalign(void** out, size_t a, size_t n) {
  counted();
  void* p = __libc_memalign(a, n);
  if (!p) return 12; /* ENOMEM */
  *out = p;
  return 0;
}

__attribute__((destructor)) static void report(void) {
  const char* path = getenv("PARVIS_ALLOC_COUNT_FILE");
  FILE* f = path ? fopen(path, "w") : NULL;
  if (!f) return;
  fprintf(f, "%lu\n", __atomic_load_n(&count, __ATOMIC_RELAXED));
  fclose(f);
}
