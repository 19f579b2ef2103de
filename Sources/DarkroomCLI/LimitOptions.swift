import ArgumentParser
import Darkroom

/// Guards against hostile input, shared by the commands that decode pixels.
struct LimitOptions: ParsableArguments {
  @Option(
    help: "Refuse images with more pixels than this, checked from the header before decoding.")
  var maxPixels: Int = Renderer().maxPixels

  @Option(
    help: ArgumentHelp(
      "Stop a file's pixel work after this many seconds (0: no limit).", valueName: "seconds"))
  var timeout: Double = 300

  func validate() throws {
    guard maxPixels >= 1 else {
      throw ValidationError(
        "Expected integer of at least 1 for --max-pixels but received \(maxPixels)")
    }
    guard timeout >= 0, timeout.isFinite else {
      throw ValidationError(
        "Expected a number of seconds, 0 or more, for --timeout but received \(timeout)")
    }
  }

  /// `renderer` with these limits.
  func apply(to renderer: Renderer) -> Renderer {
    var limited = renderer
    limited.maxPixels = maxPixels
    limited.timeLimit = timeout == 0 ? nil : .milliseconds(Int64(timeout * 1000))
    return limited
  }
}
