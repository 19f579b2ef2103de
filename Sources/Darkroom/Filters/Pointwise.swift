/// A filter step that changes each pixel on its own, whatever its neighbours. Consecutive
/// steps are planned together: tables fold into one, and a black-and-white image stays one
/// grey band (a third of the work) until something needs colour again.
enum PointwiseStep: Sendable, Equatable {
  /// Three colour bands to one grey band, weighted.
  case grey([Double])
  /// Every colour band through a 256-entry table.
  case table([UInt8])
  /// A 3x3 colour matrix (row-major).
  case matrix([Double])
  /// Stages computed in float in one pass (linear light, curves, Oklab): see
  /// ``DevelopStage``. Consecutive ones run as one pass, with no rounding between them.
  case develop([DevelopStage])
}

/// Pointwise steps waiting to run, merged as they come.
struct PointwisePlan {
  private(set) var steps: [PointwiseStep] = []
  /// Set by ``barrier()``: the next develop step starts a pass of its own.
  private var sealed = false

  /// Marks where the graph moved pixels (a crop or turn folded into the placement): the
  /// develop steps on either side stay separate passes, rounded to 8 bits between, as they
  /// are when the image is turned upright first (tables compose exactly, and still merge).
  mutating func barrier() { sealed = true }

  mutating func append(_ step: PointwiseStep) {
    if case .table(let next) = step, case .table(let previous)? = steps.last {
      steps[steps.count - 1] = .table(previous.map { next[Int($0)] })
    } else if case .develop(let next) = step, case .develop(let previous)? = steps.last, !sealed {
      steps[steps.count - 1] = .develop(previous + next)
    } else {
      steps.append(step)
    }
    sealed = false
  }

  /// Removes and returns the last step when it is a table and the steps leave one grey band
  /// (from colour): that table can go into the grey-to-colour pass at the end instead of
  /// taking a pass of its own.
  mutating func takeFinalGreyTable() -> [UInt8]? {
    guard case .table(let table)? = steps.last,
      let lastGrey = steps.lastIndex(where: { if case .grey = $0 { true } else { false } }),
      !steps[lastGrey...].contains(where: {
        switch $0 {
        case .matrix, .develop: true
        case .grey, .table: false
        }
      })
    else { return nil }
    steps.removeLast()
    return table
  }

  /// Runs the steps; `grey` says whether the image is one grey band (before and after).
  func run(on image: VipsImage, grey: inout Bool) throws(DarkroomError) -> VipsImage {
    var result = image
    for step in steps {
      switch step {
      case .grey(let weights):
        if !grey { result = try result.greyscale(weights) }
        grey = true
      case .table(let table):
        result = try result.mapped(table)
      case .matrix(let matrix):
        if grey {
          result = try result.greyToRGB()
          grey = false
        }
        result = try result.recombined(matrix)
      case .develop(let stages):
        // Three bands from here (developed makes them from grey).
        result = try result.developed(stages)
        grey = false
      }
    }
    return result
  }
}

extension PointwisePlan {
  /// `steps` planned and run on an 8-bit sRGB image: a pointwise filter's `apply`.
  static func run(_ steps: [PointwiseStep], on image: VipsImage) throws(DarkroomError)
    -> VipsImage
  {
    var grey = false
    var plan = PointwisePlan()
    for step in steps { plan.append(step) }
    let result = try plan.run(on: image, grey: &grey)
    return grey ? try result.greyToRGB() : result
  }
}
