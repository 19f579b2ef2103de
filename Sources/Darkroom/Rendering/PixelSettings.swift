/// How Darkroom does pixel work: the guards against hostile input, the quality of edited
/// results, and where decoding runs. The command line and the server fill one in from their
/// options and hand it to ``Library``, ``JobRequest`` or ``Space``; they never build the
/// renderer or editor that use it.
///
/// ```swift
/// var settings = PixelSettings()
/// settings.timeLimit = .seconds(30)
/// settings.failOn = .truncated
/// try library.edit(id, with: graph, settings: settings)
/// ```
///
/// `PixelSettings` is a `Sendable` value type.
package struct PixelSettings: Sendable {
  /// The largest input, in pixels, Darkroom will decode (a guard against decompression bombs):
  /// 268 megapixels by default, as in sharp.
  package var maxPixels = 268_402_689

  /// The longest one file's pixel work may take before it is stopped (nil: no limit).
  package var timeLimit: Duration? = .seconds(300)

  /// How much damage the decoders accept (`--fail-on`).
  package var failOn = FailOn.error

  /// Encoder quality of edited results (JPEG, WebP, AVIF, HEIC), 1-100; nil: the source's
  /// own for a JPEG, HEIC or AVIF (``JPEGQuality``, ``HEVCQuality``, ``AV1Quality``), so that
  /// an edit comes out about as large as its source, else ``defaultQuality``.
  package var quality: Int?

  /// Encoder effort of edited HEIC and AVIF results, 0 (fastest) to 9 (smallest files); nil:
  /// each format's ``ImageFormat/editEffort(pixels:)``.
  package var effort: Int?

  /// The quality of edits of sources whose own cannot be read (all but JPEG, HEIC and AVIF).
  package static let defaultQuality = 92

  /// Worker processes to run the pixel work in, so that a decoder that crashes or hangs
  /// costs one file, not the process; nil: decide per call (a job over several files of an
  /// untrusted format starts its own).
  package var workers: (any PixelWorkers)?

  /// The defaults: 268 megapixels, 300 seconds a file, damage up to `.error` refused,
  /// edits at their source's quality, no workers given.
  package init() {}
}
