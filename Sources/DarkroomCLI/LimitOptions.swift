import ArgumentParser
import Darkroom

/// Guards against hostile input, shared by the commands that decode pixels.
struct LimitOptions: ParsableArguments {
  @Option(
    parsing: .unconditional,
    help: "Refuse images with more pixels than this, checked from the header before decoding.")
  var maxPixels: Int = PixelSettings().maxPixels

  @Option(
    parsing: .unconditional,
    help: ArgumentHelp(
      "Stop a file's pixel work after this many seconds (0: no limit).", valueName: "seconds"))
  var timeout: Double = 300

  @Option(
    help: ArgumentHelp(
      "How much damage decoders accept: none, truncated, error or warning.", valueName: "level"))
  var failOn: FailOn = .error

  @OptionGroup var formats: FormatOptions

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

  /// Pixel settings with these limits (and the formats allowed, for the whole process).
  func settings() -> PixelSettings {
    formats.allow()
    var settings = PixelSettings()
    settings.failOn = failOn
    settings.maxPixels = maxPixels
    settings.timeLimit = timeout == 0 ? nil : .milliseconds(Int64(timeout * 1000))
    Containment.timeLimit = settings.timeLimit
    return settings
  }
}

/// `--allow-format` and `--deny-format`, shared by the commands that read images.
struct FormatOptions: ParsableArguments {
  @Option(
    help: ArgumentHelp(
      "Also read this format (svg, pdf, jp2k, fits, magick, ...); repeat for more. JPEG XL is read without it, in the sandboxed workers.",
      valueName: "name"))
  var allowFormat: [String] = []

  @Option(
    help: ArgumentHelp(
      "Refuse this format, even a trusted one (heif, jxl, tiff, ...); repeat for more.",
      valueName: "name"))
  var denyFormat: [String] = []

  /// Lets the formats through (and refuses the denied ones), for this process and the
  /// workers it starts.
  func allow() {
    if !allowFormat.isEmpty { TrustedFormats.allow(allowFormat) }
    if !denyFormat.isEmpty { TrustedFormats.deny(denyFormat) }
  }
}

extension FailOn: ExpressibleByArgument {}
