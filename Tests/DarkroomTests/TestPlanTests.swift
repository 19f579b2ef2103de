import CTestPlan
import Foundation
import Testing

/// The run's own shape: Tests/CTestPlan/test_plan.c gives Swift Testing a width before it
/// plans the run, or every test starts at once and the async ones pass their time limits
/// waiting behind the synchronous ones.
@Suite("The test run")
struct TestPlanTests {
  @Test("runs twice the cores' tests at once, unless its caller said how many")
  func width() {
    let width = Int(darkroom_test_width())
    if darkroom_test_width_is_ours() == 1 {
      #expect(width == 2 * max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN))))
    } else {
      #expect(width > 0, "the caller's SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH")
    }
  }
}
