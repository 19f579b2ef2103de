#ifndef DARKROOM_TEST_PLAN_H
#define DARKROOM_TEST_PLAN_H

/// The width test_plan.c sets, per online core.
enum { DARKROOM_TEST_WIDTH_PER_CORE = 6 };

/// How many test cases Swift Testing runs at once in this process: what
/// SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH said when the process started, which
/// test_plan.c sets (before main) when the caller did not. 0 if it is not a number.
int darkroom_test_width(void);

/// 1 if test_plan.c set the width (the caller had not), else 0.
int darkroom_test_width_is_ours(void);

#endif
