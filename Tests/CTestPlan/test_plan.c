// How many tests run at once, set before Swift Testing reads it (it reads the environment
// once, when it plans the run, after main has begun; this runs when the test executable
// is loaded, before main).
//
// Why: without a width, Swift Testing starts every test at once, and each one's time limit
// runs while ~480 tests share the processor (on 2 cores, six passed their limits). With a
// width, a test waits for a place before it starts, and its limit counts from there
// (Runner's test-case serializer).
//
// Six times the cores: most tests spend their time waiting for processes they started (a
// darkroom, a browser, a server), and since each suite runs off Swift's pool
// (Tests/DarkroomTests/OffThePool.swift) a waiting test holds up no other. Measured on 2
// cores, the whole run: width 4 (twice the cores, tests on Swift's pool) 816 s; with
// .offThePool, width 8 392 s, width 12 358 s.
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
  snprintf(width, sizeof width, "%ld", DARKROOM_TEST_WIDTH_PER_CORE * (cores > 1 ? cores : 1));
  ours = setenv(widthVariable, width, 0) == 0;
}

int darkroom_test_width(void) {
  const char *width = getenv(widthVariable);
  return width ? atoi(width) : 0;
}

int darkroom_test_width_is_ours(void) { return ours; }
