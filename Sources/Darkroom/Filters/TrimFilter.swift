/// A video's part in time: what is kept, from `start` to `end` seconds. Frames are not
/// changed; a photo has no time to cut.
enum TrimFilter: FilterDefinition {
  static let name = "trim"
  static let space = FilterSpace.time
  static let summary = "keep a video from start to end seconds (videos only)"
  static let parameters = [
    FilterParameter(
      "start", .number(0...86_400), default: .number(0), "seconds from the video's start kept from"),
    FilterParameter(
      "end", .number(0...86_400), default: .number(0),
      "seconds from the video's start kept up to; 0: its end"),
  ]
  static let since = 2

  static func validate(_ arguments: FilterArguments) throws(DarkroomError) {
    let (start, end) = (arguments.number("start") ?? 0, arguments.number("end") ?? 0)
    if end > 0 && end <= start {
      throw DarkroomError(
        .invalidArgument, "trim keeps start to end: end (\(end)) must come after start (\(start))")
    }
  }

  static func apply(_ arguments: FilterArguments, to image: VipsImage) throws(DarkroomError)
    -> VipsImage
  {
    throw DarkroomError(
      .invalidArgument, file: image.source, "trim cuts a video's time: a photo has none")
  }

  /// The part of a video `trims` keep, in order: each trim counts from the start of the part
  /// the one before it kept. (0, 0): all of it.
  static func kept(_ trims: [FilterArguments]) -> (start: Double, end: Double) {
    var (start, end) = (0.0, 0.0)
    for trim in trims {
      let (from, to) = (trim.number("start") ?? 0, trim.number("end") ?? 0)
      let newEnd = to > 0 ? start + to : end
      start += from
      end = end > 0 && newEnd > 0 ? min(end, newEnd) : (newEnd > 0 ? newEnd : end)
    }
    return (start, end)
  }
}
