/* The practical limit for random 4 KiB reads through pread(2): the smallest loop
 * that does the same work as a benchmark tool (uniform random block offsets over
 * the same test files, one descriptor per file, one buffer), with no statistics
 * beyond a counter. Used by benches/compare.sh as the reference "minimal loop".
 *
 * usage: pread_loop DIR FILES TOTAL_BYTES BLOCK SECONDS THREADS
 * prints: ops_per_s
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int nfiles;
static int *fds;
static uint64_t file_size, block;
static double seconds;
static volatile int stop;

static uint64_t xs(uint64_t *s) { /* xorshift64* */
    uint64_t x = *s;
    x ^= x >> 12; x ^= x << 25; x ^= x >> 27;
    *s = x;
    return x * 0x2545F4914F6CDD1DULL;
}

static void *worker(void *arg) {
    uint64_t seed = (uint64_t)(uintptr_t)arg * 0x9E3779B97F4A7C15ULL + 1;
    char *buf = aligned_alloc(4096, block);
    uint64_t blocks_per_file = file_size / block, n = 0;
    while (!stop) {
        uint64_t r = xs(&seed);
        int f = (int)(r % (uint64_t)nfiles);
        uint64_t off = ((r >> 20) % blocks_per_file) * block;
        if (pread(fds[f], buf, block, (off_t)off) != (ssize_t)block) { perror("pread"); exit(1); }
        n++;
    }
    free(buf);
    return (void *)(uintptr_t)n;
}

int main(int argc, char **argv) {
    if (argc != 7) { fprintf(stderr, "usage: %s DIR FILES TOTAL BLOCK SECONDS THREADS\n", argv[0]); return 2; }
    nfiles = atoi(argv[2]);
    file_size = strtoull(argv[3], 0, 10) / nfiles;
    block = strtoull(argv[4], 0, 10);
    seconds = atof(argv[5]);
    int threads = atoi(argv[6]);
    fds = calloc(nfiles, sizeof(int));
    for (int i = 0; i < nfiles; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/test_file.%d", argv[1], i);
        fds[i] = open(path, O_RDONLY);
        if (fds[i] < 0) { perror(path); return 1; }
    }
    pthread_t t[256];
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (int i = 0; i < threads; i++) pthread_create(&t[i], 0, worker, (void *)(uintptr_t)(i + 1));
    struct timespec d = {(time_t)seconds, (long)((seconds - (time_t)seconds) * 1e9)};
    nanosleep(&d, 0);
    stop = 1;
    uint64_t total = 0;
    for (int i = 0; i < threads; i++) { void *r; pthread_join(t[i], &r); total += (uint64_t)(uintptr_t)r; }
    clock_gettime(CLOCK_MONOTONIC, &b);
    double el = (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9;
    printf("%.2f\n", total / el);
    return 0;
}
