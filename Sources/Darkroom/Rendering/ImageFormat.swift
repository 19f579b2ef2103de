/// Output formats Darkroom writes.
///
/// ```swift
/// var spec = RenditionSpec(.fullscreen)
/// spec.format = ImageFormat(fileExtension: "webp")  // .webp
/// ```
///
/// Darkroom reads more formats than it writes (GIF, say; see ``readOnlyExtensions``).
/// `ImageFormat` is a `Sendable` value type.
public enum ImageFormat: String, Sendable, Codable, CaseIterable {
  /// JPEG, PNG, WebP, AVIF, HEIC and TIFF. The raw values (`jpeg`, `png`, ...) are the names
  /// adjustment data and JSON output use.
  case jpeg, png, webp, avif, heic, tiff

  /// The file extension Darkroom gives outputs in this format.
  public var fileExtension: String {
    switch self {
    case .jpeg: "jpg"
    case .tiff: "tif"
    default: rawValue
    }
  }

  /// Whether the format can carry an alpha (transparency) channel: all but JPEG.
  public var supportsAlpha: Bool { self != .jpeg }

  /// Extensions of image formats Darkroom may read but does not write (`gif`, `bmp`, ...),
  /// so that `-o picture.gif` is told so rather than that its format is unknown.
  public static let readOnlyExtensions: Set<String> = [
    "gif", "bmp", "jp2", "j2k", "jxl", "svg", "svgz", "pdf", "ico", "tga", "ppm", "pgm", "pbm",
    "pnm", "psd", "exr", "hdr", "fits", "raw", "dng", "cr2", "nef", "arw",
  ]

  /// The format an extension names (`jpg`, `JPEG`, `tif`, ...), or nil.
  public init?(fileExtension: String) {
    switch fileExtension.lowercased() {
    case "jpg", "jpeg", "jpe": self = .jpeg
    case "png": self = .png
    case "webp": self = .webp
    case "avif": self = .avif
    case "heic", "heif": self = .heic
    case "tif", "tiff": self = .tiff
    default: return nil
    }
  }

  /// The format Darkroom writes for a source whose format is `name` (from metadata).
  public init?(sourceFormat name: String) {
    switch name {
    case "jpeg": self = .jpeg
    case "png": self = .png
    case "webp": self = .webp
    case "avif": self = .avif
    case "heif": self = .heic
    case "tiff": self = .tiff
    default: return nil
    }
  }

  /// Whether `effort` changes how this format is encoded: HEIC's and AVIF's encoders trade
  /// time for bytes; the others have nothing to trade here.
  public var takesEffort: Bool { Self.editEfforts[self] != nil }

  /// The encoder effort renditions in HEIC or AVIF are written with: 0, the fastest. A
  /// rendition can be made again at any time, and is asked for while someone waits.
  public static let renditionEffort = 0

  /// The encoder effort an edit in this format of a photo of `pixels` pixels (its
  /// original's, before any crop) is written with unless one is asked for (`--effort`); nil
  /// for a format without efforts. The larger the photo, the faster the setting:
  ///
  /// | pixels | AVIF: effort (aom's speed) | HEIC: effort (x265's preset) |
  /// |---|---|---|
  /// | up to 4 M | 4 (5, libvips' default) | 6 (`slow`, libheif's default) |
  /// | up to 5 M | 4 (5) | 2 (`veryfast`) |
  /// | up to 8.5 M | 3 (6) | 2 |
  /// | up to 10 M | 3 (6) | 1 (`superfast`) |
  /// | up to 13 M (a phone's 12 M) | 3 (6) | 0 (`ultrafast`) |
  /// | up to 20 M | 2 (7) | 0 |
  /// | more | 0 (9) | 0 |
  ///
  /// Chosen by rate and distortion measured on three real 12-megapixel photos and their noir
  /// edits (`Benchmarks/encoder_rd.sh`; its table in Benchmarks/README): at each size, the
  /// setting whose SSIM at the same bytes comes closest to libvips' default's among those
  /// that encode in 3 s or less on two cores at the qualities phones write (45 to 65).
  /// aom's speed 8 is never chosen: it measured worse per byte than 9.
  public func editEffort(pixels: Int) -> Int? {
    Self.editEfforts[self]?.first { pixels <= $0.upTo }?.effort
  }

  /// The efforts of edits by their size (see ``editEffort(pixels:)``): for each format that
  /// takes efforts, the first step whose `upTo` (pixels) the edit does not exceed.
  static let editEfforts: [ImageFormat: [(upTo: Int, effort: Int)]] = [
    .avif: [(5_000_000, 4), (13_000_000, 3), (20_000_000, 2), (.max, 0)],
    .heic: [(4_000_000, 6), (8_500_000, 2), (10_000_000, 1), (.max, 0)],
  ]

  /// The efforts `--effort` takes: 0 (fastest) to 9 (slowest, smallest file), as libvips
  /// counts them. For HEIC they name x265's presets, `ultrafast` to `placebo`.
  public static let efforts = 0...9

  /// x265's preset for an effort (``efforts``), clamped into range.
  static func x265Preset(effort: Int) -> String {
    let presets = [
      "ultrafast", "superfast", "veryfast", "faster", "fast", "medium", "slow", "slower",
      "veryslow", "placebo",
    ]
    return presets[min(max(effort, 0), presets.count - 1)]
  }

  /// The libvips saver and its options, as a filename suffix for `vips_image_write_to_buffer`.
  /// A nil `effort` leaves libvips' own default (how edits were written before efforts were
  /// kept in their adjustment data, so that those still render to the same bytes).
  func saverSuffix(quality: Int, effort: Int?, strip: Bool) -> String {
    var options: [String] = []
    switch self {
    case .jpeg, .webp, .avif, .heic: options.append("Q=\(quality)")
    case .tiff: options.append("compression=deflate")
    case .png: break
    }
    if self == .avif { options.append("compression=av1") }
    if self == .avif, let effort { options.append("effort=\(effort)") }
    if strip { options.append("strip") }
    let suffix = self == .avif ? ".avif" : "." + fileExtension
    return options.isEmpty ? suffix : suffix + "[" + options.joined(separator: ",") + "]"
  }
}

extension VipsImage {
  /// Runs the pipeline and encodes the result in `format`: HEIC of an 8-bit image through
  /// libheif with x265's preset for `effort` (``VipsImage/encodeHEIC(quality:preset:strip:)``),
  /// every other case through libvips' saver. `strip` leaves out EXIF, XMP and the ICC
  /// profile. A nil `effort` is libvips' saver with its own default effort (see
  /// ``ImageFormat/saverSuffix(quality:effort:strip:)``).
  func encode(_ format: ImageFormat, quality: Int, effort: Int?, strip: Bool)
    throws(DarkroomError) -> [UInt8]
  {
    if format == .heic, let effort,
      let bytes = try encodeHEIC(
        quality: quality, preset: ImageFormat.x265Preset(effort: effort), strip: strip)
    {
      return bytes
    }
    return try encode(suffix: format.saverSuffix(quality: quality, effort: effort, strip: strip))
  }
}
