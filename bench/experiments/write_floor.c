// Experiment (issue 11, the CPU target omp(2) <= 0.5x cv2.integral f64 at 10000^2): how fast can
// this machine write the integral's 800 MB output at all? Two threads, each writing half of one
// 800 MB buffer (2 MiB aligned, transparent huge pages asked, faulted in first): glibc memset
// against AVX2 non-temporal stores (_mm256_stream_si256, as the simd/omp band kernel stores large
// outputs). Prints the best of 7 runs of each.
//   cc -O2 -mavx2 -pthread bench/experiments/write_floor.c -o /tmp/write_floor && /tmp/write_floor
#include <immintrin.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static const size_t kBytes = (size_t)800 << 20;
static char* buf;
static int use_stream;

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static void* write_half(void* arg) {
  const long id = (long)arg;
  const size_t lo = kBytes / 2 * (size_t)id, hi = lo + kBytes / 2;
  if (!use_stream) {
    memset(buf + lo, (int)id + 1, hi - lo);
  } else {
    const __m256i v = _mm256_set1_epi8((char)(id + 1));
    for (size_t i = lo; i < hi; i += 32) _mm256_stream_si256((__m256i*)(buf + i), v);
    _mm_sfence();
  }
  return NULL;
}

int main(void) {
  buf = aligned_alloc((size_t)2 << 20, kBytes);
  if (!buf) return fprintf(stderr, "write_floor: out of memory\n"), 1;
  madvise(buf, kBytes, MADV_HUGEPAGE);
  memset(buf, 0, kBytes);  // pages faulted in: the integral's "output reused" case
  for (use_stream = 0; use_stream < 2; ++use_stream) {
    double best = 1e30;
    for (int run = 0; run < 7; ++run) {
      pthread_t t[2];
      const double t0 = now_ms();
      for (long i = 0; i < 2; ++i) pthread_create(&t[i], NULL, write_half, (void*)i);
      for (int i = 0; i < 2; ++i) pthread_join(t[i], NULL);
      const double ms = now_ms() - t0;
      if (ms < best) best = ms;
    }
    printf("%-9s 800 MB, 2 threads: best %.1f ms (%.1f GB/s)\n", use_stream ? "nt-store" : "memset", best,
           (double)kBytes / best / 1e6);
  }
  free(buf);
  return 0;
}
