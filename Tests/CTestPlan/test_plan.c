// How many tests run at once, set before Swift Testing reads it (it reads the environment
// once, when it plans the run, after main has begun; this runs when the test executable
// is loaded, before main).
//
// Why: Swift's concurrency runs every task on a pool as wide as the processor's cores (2 on
// CI), and a synchronous test (a browser driven over a socket, a darkroom process waited
// for) holds one of those threads while it runs. Without a width, Swift Testing starts
// every test at once: each async test, at each await, waits behind every test not yet
// begun, its time limit running, and on 2 cores a run of ~480 tests saw 60 to 190 of them
// pass their 5-minute limits while doing nothing. With a width, a test waits for a place
// before it starts, and its limit counts from there (Runner's test-case serializer). Twice
// the cores keeps the processor busy while tests wait on processes they started.
//
// A width the caller set (the variable, or --experimental-maximum-parallelization-width)
// is kept.
#include "test_plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static const char *const widthVariable = "SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH";
static int ours = 0;

__attribute__((constructor)) static void darkroom_test_plan(void) {
  if (getenv(widthVariable)) return;
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  char width[24];
  snprintf(width, sizeof width, "%ld", 2 * (cores > 1 ? cores : 1));
  ours = setenv(widthVariable, width, 0) == 0;
}

int darkroom_test_width(void) {
  const char *width = getenv(widthVariable);
  return width ? atoi(width) : 0;
}

int darkroom_test_width_is_ours(void) { return ours; }
