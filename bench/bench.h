/*
 * bench.h — what the bench programs share: a monotonic clock in
 * microseconds and the comparison qsort() needs for a median.
 *
 * Header-only (static inline): bench/run.sh builds every bench/bench_*.c as
 * a program of its own, with nothing else linked in.
 */
#ifndef WARD_BENCH_H
#define WARD_BENCH_H

#include <time.h>

/* CLOCK_MONOTONIC, in microseconds. */
static inline double bench_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* qsort()'s comparison for doubles, ascending. */
static inline int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

#endif
